package polite

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Headers that came after the request's lease expired (a Base slower than
// Budget.Lease): the body was tracked with a nanosecond left, and a
// caller reading it at once, as a network does, a millisecond a read, was
// reported to have abandoned it (EventAbandoned, "usually a bug in the
// caller's code", logged at Warn).
func TestLateHeadersReportNoAbandon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var got []Event
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			time.Sleep(20 * time.Second)
			body := io.NopCloser(&slowReader{strings.NewReader(strings.Repeat("x", 10000))})
			return &http.Response{StatusCode: 200, ContentLength: -1, Header: http.Header{}, Body: body, Request: r}, nil
		})
		tr := &Transport{Base: base, MaxConcurrency: 3, Budget: &Budget{MaxConcurrency: 3, Lease: 16 * time.Second}, MaxWait: time.Minute,
			OnEvent: func(e Event) {
				mu.Lock()
				got = append(got, e)
				mu.Unlock()
			}}
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(resp.Body); len(b) != 10000 {
			t.Errorf("read %d bytes, want 10000", len(b))
		}
		resp.Body.Close()
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, e := range got {
			if e.Kind == EventAbandoned {
				t.Errorf("EventAbandoned %+v for a body read to its end at once", e)
			}
		}
		if st, _ := tr.Budget.Inspect("http://api.test", time.Now()); st.InFlight != 0 {
			t.Errorf("%d in flight after the body ended, want 0", st.InFlight)
		}
		k := memKey{scheme: "http", host: "api.test"}
		sh := tr.ceil.shard(k)
		sh.mu.Lock()
		if e := sh.m[k]; e != nil && e.inflight.N() != 0 {
			t.Errorf("local ceiling: %d in flight after the body ended, want 0", e.inflight.N())
		}
		sh.mu.Unlock()
	})
}

// slowReader takes a millisecond a read, as a network does.
type slowReader struct{ r io.Reader }

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	return s.r.Read(p)
}
