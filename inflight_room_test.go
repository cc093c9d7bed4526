package polite_test

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A quota of 5000 a day with 4990 spent before the run, its reset hours
// away: the 10 requests left all go, and every other task fails at once
// with a WaitError (MaxWait is 10 minutes), nothing refused. Before, a
// request that found the room taken by requests in flight was held until
// the reset, and so failed at once, while their answers, whose server had
// counted them already, showed room: 7-9 of the 10 went with 16 and 100
// workers.
func TestRoomTakenByRequestsInFlight(t *testing.T) {
	const tasks = 100
	for _, d := range []ratelimittest.Dialect{ratelimittest.IETF, ratelimittest.GitHub, ratelimittest.XRateLimitDelta} {
		for _, workers := range []int{16, 100} {
			t.Run(fmt.Sprintf("%s/%d workers", d, workers), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					toNow()
					h := ratelimittest.NewHandler(ratelimittest.Config{
						Policies: []ratelimittest.Policy{{Name: "day", Quota: 5000, Window: 24 * time.Hour}},
						Dialect:  d,
						Latency:  50 * time.Millisecond,
						Phase:    21 * time.Hour,
					})
					for range 4990 { // yesterday's jobs
						req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
						h.ServeHTTP(discard{http.Header{}}, req)
					}
					c, _ := politeOver(h)
					var ok, waitErrs, other atomic.Int64
					var next atomic.Int64
					var wg sync.WaitGroup
					start := time.Now()
					for range workers {
						wg.Go(func() {
							for next.Add(1) <= tasks {
								resp, err := c.Get("http://api.test/")
								switch {
								case errors.As(err, new(*polite.WaitError)):
									waitErrs.Add(1)
								case err != nil:
									other.Add(1)
								default:
									resp.Body.Close()
									if resp.StatusCode == http.StatusOK {
										ok.Add(1)
									} else {
										other.Add(1)
									}
								}
							}
						})
					}
					wg.Wait()
					took := time.Since(start)
					if ok.Load() != 10 || waitErrs.Load() != tasks-10 || other.Load() != 0 {
						t.Errorf("%d OK, %d WaitErrors, %d other; want 10, %d, 0", ok.Load(), waitErrs.Load(), other.Load(), tasks-10)
					}
					if s := h.Stats(); s.Refused != 0 {
						t.Errorf("%d refused, want 0", s.Refused)
					}
					if took > time.Second {
						t.Errorf("took %v, want a round trip or a few", took)
					}
				})
			})
		}
	}
}
