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

// An overloaded origin behind a gateway: for a while every other answer
// is a bare 429 and the rest 502, then it serves everything. The doc says
// an outage is 40 flights in a row refused or failed; a flight both
// refused and failed counts twice (once by refusal, once by failure), and
// still tasks the server serves after the blip do not fail.
func TestTransientMixedBlip(t *testing.T) {
	for _, blip := range []time.Duration{15 * time.Second, 25 * time.Second, 35 * time.Second} {
		t.Run(blip.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var n atomic.Int64
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					time.Sleep(100 * time.Millisecond)
					code := http.StatusOK
					if time.Since(start) < blip {
						code = http.StatusBadGateway
						if n.Add(1)%2 == 0 {
							code = http.StatusTooManyRequests
						}
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
				t.Logf("blip %v: %d of %d tasks failed; took %v", blip, failed.Load(), done.Load(), time.Since(start).Round(time.Second))
			})
		})
	}
}
