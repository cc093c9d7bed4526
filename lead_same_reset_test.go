package polite_test

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// A lead proved on a sliding log whose resets are whole epoch seconds,
// rounded up, is void once a request sent in it is answered as of the
// window it was to end: the log freed only the starts of its oldest
// burst, the answers state the same reset as before, and the key, reading
// that reset a lead early, went on past what was left (one refused in
// every run of bursts of 30 every 1.7 s against 20 per second).
func TestLeadVoidWhenResetDoesNotMove(t *testing.T) {
	for _, d := range []ratelimittest.Dialect{ratelimittest.GitHub, ratelimittest.XRateLimitEpoch} {
		for _, start := range []time.Duration{0, 111 * time.Millisecond, 222 * time.Millisecond} {
			for _, latency := range []time.Duration{0, 5 * time.Millisecond} {
				cfg := ratelimittest.Config{
					Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.SlidingLog, Quota: 20, Window: time.Second}},
					Dialect:  d,
					Latency:  latency,
				}
				synctest.Test(t, func(t *testing.T) {
					time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) + start)
					h := ratelimittest.NewHandler(cfg)
					c, _ := politeOver(h)
					var (
						wg sync.WaitGroup
						mu sync.Mutex
						ok int
					)
					for range 8 {
						for range 30 {
							wg.Go(func() {
								req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
								resp, err := c.Do(req)
								if err != nil {
									t.Error(err)
									return
								}
								io.Copy(io.Discard, resp.Body)
								resp.Body.Close()
								mu.Lock()
								if resp.StatusCode == http.StatusOK {
									ok++
								}
								mu.Unlock()
							})
						}
						time.Sleep(1700 * time.Millisecond)
					}
					wg.Wait()
					if s := h.Stats(); s.Refused > 0 || ok != 240 {
						t.Errorf("%s, started %v into a second, latency %v: %d refused, %d of 240 ok", d, start, latency, s.Refused, ok)
					}
				})
			}
		}
	}
}
