package polite_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A Base slower than the request's context deadline (it answers 1s after
// the deadline, as one that ignores its context does, or net/http when the
// headers race the deadline): the lease ended at that deadline, before the
// headers came, and the caller, who reads the body at once, abandoned
// nothing: no EventAbandoned. The budget's expiry, rounded up to its slot,
// was still ahead, and the event blamed the caller. The same case with
// Budget.Lease instead of a deadline is TestLateHeadersReportNoAbandon.
func TestLateHeadersPastDeadlineReportNoAbandon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var abandoned []polite.Event
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			time.Sleep(6 * time.Second) // past the 5s deadline
			body := io.NopCloser(strings.NewReader(strings.Repeat("x", 10000)))
			return &http.Response{StatusCode: 200, ContentLength: -1, Header: http.Header{}, Body: body, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, OnEvent: func(e polite.Event) {
			if e.Kind == polite.EventAbandoned {
				mu.Lock()
				abandoned = append(abandoned, e)
				mu.Unlock()
			}
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()                // no time passes: the caller reads at once
		io.Copy(io.Discard, resp.Body) // to its end
		resp.Body.Close()
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, e := range abandoned {
			t.Errorf("EventAbandoned (Wait %v) for a body handed over after the deadline ended its lease, and read at once to its end", e.Wait)
		}
	})
}
