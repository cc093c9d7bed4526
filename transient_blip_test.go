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

// A gateway's blip of 502s, then the origin serves everything. 100
// callers loop on GETs (a task each, 200 ms of work between two) with a
// 60 s deadline: a task the server serves soon after the blip should not
// fail.
func TestTransientBlipTasksServed(t *testing.T) {
	for _, blip := range []time.Duration{5 * time.Second, 20 * time.Second, 35 * time.Second, 39 * time.Second, 45 * time.Second} {
		t.Run(blip.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					time.Sleep(100 * time.Millisecond)
					code := http.StatusOK
					if time.Since(start) < blip {
						code = http.StatusBadGateway
					}
					return &http.Response{StatusCode: code, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				tr := &polite.Transport{Base: base, RetryTransient: true}
				var failed, done atomic.Int64
				var wg sync.WaitGroup
				stop := start.Add(blip + 30*time.Second)
				for range 100 {
					wg.Go(func() {
						for time.Now().Before(stop) {
							ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
							req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
							resp, err := tr.RoundTrip(req)
							if err != nil || resp.StatusCode != http.StatusOK {
								failed.Add(1)
							}
							if err == nil {
								resp.Body.Close()
							}
							done.Add(1)
							cancel()
							time.Sleep(200 * time.Millisecond)
						}
					})
				}
				wg.Wait()
				v, _ := tr.Inspect("http://api.test/", time.Now())
				t.Logf("blip %v: %d of %d tasks failed; took %v; retries left %d", blip, failed.Load(), done.Load(), time.Since(start).Round(time.Second), v.RetriesLeft)
			})
		})
	}
}
