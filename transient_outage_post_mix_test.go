package polite_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// TestTransientOutageRetriesWithinBudget's 502 gateway (50 callers, a
// second of work between two, default MaxAttempts and MaxWait, 30 s
// deadlines), with one of the 50 callers sending POSTs without an
// idempotency key. Each POST's 502 went back to the caller as an accepted
// answer, which ended the run of failed flights: the 49 GET callers'
// outage never started, and the origin got the loop rate (474 requests in
// the second minute), where with GETs alone it gets a request a pause.
func TestTransientOutageWithPOSTs(t *testing.T) {
	for _, posts := range []int{0, 1} {
		t.Run(map[int]string{0: "GETs only", 1: "one POST caller"}[posts], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var late atomic.Int64
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if d := time.Since(start); d >= time.Minute && d < 2*time.Minute {
						late.Add(1)
					}
					return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				tr := &polite.Transport{Base: base, RetryTransient: true}
				stop := start.Add(2 * time.Minute)
				var wg sync.WaitGroup
				for i := range 50 {
					method := http.MethodGet
					if i < posts {
						method = http.MethodPost
					}
					wg.Go(func() {
						for time.Now().Before(stop) {
							ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
							req, _ := http.NewRequestWithContext(ctx, method, "http://down.test/", nil)
							resp, err := tr.RoundTrip(req)
							if err == nil {
								resp.Body.Close()
							}
							cancel()
							time.Sleep(time.Second)
						}
					})
				}
				wg.Wait()
				t.Logf("%d requests from 60s to 120s", late.Load())
				if n := late.Load(); n > 60 {
					t.Errorf("%d requests to a down origin from 60s to 120s, want one a second at most (its requests probing it one a pause)", n)
				}
			})
		})
	}
}
