package polite_test

import (
	"errors"
	"io"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A server that limits the requests in flight to four and states nothing,
// 16 workers, 10,000 tasks, a MaxWait of a minute: every task is served,
// none waits past its MaxWait. A request held for a slot was not served in
// its turn: the worker whose request an answer ended asked again before
// the requests that answer woke had run, and took the slot, answer after
// answer, so that some of those held waited past a minute and failed with
// a *WaitError while the server served the others (29 tasks a run, on
// average, under one P). A request held that long for a slot now claims
// its place (control's turn.go).
func TestLimitInFlightHeldServedInTurn(t *testing.T) {
	runs := 2
	if testing.Short() {
		runs = 1
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	cfg := ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.Concurrency, Quota: 4}},
		Dialect:  ratelimittest.Bare429,
		Latency:  100 * time.Millisecond,
	}
	for range runs {
		synctest.Test(t, func(t *testing.T) {
			present()
			h := ratelimittest.NewHandler(cfg)
			c := &http.Client{Transport: &polite.Transport{MaxWait: time.Minute, Base: &ratelimittest.Transport{Handler: h}}}
			var (
				next, tooLong, other atomic.Int64
				longest              time.Duration
				mu                   sync.Mutex
				wg                   sync.WaitGroup
			)
			for range 16 {
				wg.Go(func() {
					for next.Add(1) <= 10000 {
						start := time.Now()
						req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
						resp, err := c.Do(req)
						var we *polite.WaitError
						switch {
						case errors.As(err, &we):
							tooLong.Add(1)
							continue
						case err != nil:
							t.Errorf("Do: %v", err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							other.Add(1)
						}
						mu.Lock()
						longest = max(longest, time.Since(start))
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if tooLong.Load() != 0 || other.Load() != 0 {
				t.Errorf("%d tasks failed with a wait past MaxWait and %d with another status, of 10,000 (longest served %v); want none", tooLong.Load(), other.Load(), longest)
			}
		})
	}
}
