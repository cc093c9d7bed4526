package polite_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// lateReleaseStore answers its second Update (the release of the answer)
// after 3 s, the others at once: a remote Store slow for a moment.
type lateReleaseStore struct {
	m     polite.MemoryStore
	calls atomic.Int64
}

func (s *lateReleaseStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.calls.Add(1) == 2 {
		time.Sleep(3 * time.Second)
	}
	return s.m.Update(ctx, key, fn)
}

func (s *lateReleaseStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.m.Wait(ctx, key, gen, until)
}

// A body handed over past the context's deadline ends its request at once
// with no EventAbandoned, however late the headers were: here Base answers
// at +1s, before the 2 s deadline, and the release on the Store takes 3 s,
// so the body is handed over at +4s. Judged by when the headers came, the
// caller, who read the body at once, was blamed.
func TestStreamHandedOverPastDeadlineAfterSlowRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var abandoned []polite.Event
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			time.Sleep(time.Second) // before the 2 s deadline
			body := io.NopCloser(strings.NewReader(strings.Repeat("x", 10000)))
			return &http.Response{StatusCode: 200, ContentLength: -1, Header: http.Header{}, Body: body, Request: r}, nil
		})
		st := &lateReleaseStore{}
		tr := &polite.Transport{Base: base, Budget: &polite.Budget{Store: st}, OnEvent: func(e polite.Event) {
			if e.Kind == polite.EventAbandoned {
				mu.Lock()
				abandoned = append(abandoned, e)
				mu.Unlock()
			}
		}}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("body handed over at +%v (deadline +2s), Store calls %d", time.Since(start), st.calls.Load())
		synctest.Wait()                // no time passes: the caller reads at once
		io.Copy(io.Discard, resp.Body) // to its end
		resp.Body.Close()
		time.Sleep(10 * time.Second) // the slow releases end
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, e := range abandoned {
			t.Errorf("EventAbandoned (Wait %v) for a body handed over after the deadline ended its lease, and read at once to its end", e.Wait)
		}
	})
}
