package polite_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A gateway failing everything for 3 minutes. doc.go ("Retries"): with
// RetryTransient, transient failures' "flights count toward an outage, at
// most one a second; in one, each flight's failure pauses the origin ... a
// second, doubled with each flight, up to a minute, its requests then
// probing it one a pause". A 502 or 504 that cannot go again (the last
// attempt: MaxAttempts 1 here; a POST without an idempotency key; a
// context ended) counts too: released as an accepted answer, which reset
// the run, it sent 600 requests from 1 to 3 minutes, where a connection
// error on the same requests, counted, sent 3.
func TestTransientNotRetriedCountsTowardOutage(t *testing.T) {
	for _, tt := range []struct {
		name     string
		code     int // 0: the dial is refused
		attempts int
		method   string
	}{
		{"dial refused/MaxAttempts 1", 0, 1, http.MethodGet},
		{"502/MaxAttempts 1", http.StatusBadGateway, 1, http.MethodGet},
		{"504/MaxAttempts 1", http.StatusGatewayTimeout, 1, http.MethodGet},
		{"502/POST", http.StatusBadGateway, 0, http.MethodPost},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var late atomic.Int64
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if time.Since(start) >= time.Minute {
						late.Add(1)
					}
					return downAnswer(r, tt.code)
				})
				tr := &polite.Transport{Base: base, RetryTransient: true, MaxAttempts: tt.attempts}
				stop := start.Add(3 * time.Minute)
				var wg sync.WaitGroup
				for range 5 {
					wg.Go(func() {
						for time.Now().Before(stop) {
							ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
							req, _ := http.NewRequestWithContext(ctx, tt.method, "http://down.test/", strings.NewReader(""))
							req.Body = nil
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
				v, _ := tr.Inspect("http://down.test/", time.Now())
				t.Logf("%d requests from 1m to 3m; at the end paused until +%v (%q)", late.Load(), time.Until(v.PauseUntil).Round(time.Millisecond), v.PauseReason)
				// In the outage (from about 40 s), one a pause of a
				// second doubling to a minute: a dozen at most.
				if n := late.Load(); n > 60 {
					t.Errorf("%d requests to a down origin from 1m to 3m (5 callers, a second apart): no outage; want its requests probing it one a pause", n)
				}
			})
		})
	}
}
