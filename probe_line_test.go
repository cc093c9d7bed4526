package polite_test

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// Caller A sends 10 to a fixed window of 10 per 5 minutes that states
// nothing, then an 11th: refused, it is the learner's probe at each
// attempt, its waits lengthened (DESIGN.md §6). Caller B, one request at
// a time, comes at 8 minutes: its first request is accepted, which ends
// the measurement. A is served: within the window B opened, or the
// learned window after it, whose pace counts from the planned end of A's
// lengthened wait. Counted from A's refusal, spent on that wait, the
// learned window after B's did not fit MaxWait, and A failed with a
// *WaitError (before the waits were lengthened, A got its 429 back).
func TestProbeWaitThenLearnedWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: 5 * time.Minute}},
			Dialect:  ratelimittest.Bare429,
			Latency:  10 * time.Millisecond,
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
		c := &http.Client{Transport: tr}
		start := time.Now()
		get := func() (int, error) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			return statusOf(c, req)
		}
		for range 10 {
			get()
		}
		var mu sync.Mutex
		var order []string
		var wg sync.WaitGroup
		var aCode int
		var aErr error
		var aAt time.Duration
		wg.Go(func() {
			aCode, aErr = get()
			aAt = time.Since(start)
			mu.Lock()
			order = append(order, "A")
			mu.Unlock()
		})
		time.Sleep(8 * time.Minute)
		wg.Go(func() {
			for range 10 {
				code, err := get()
				mu.Lock()
				order = append(order, "B")
				mu.Unlock()
				if err != nil || code != 200 {
					t.Errorf("B: %d %v at +%v", code, err, time.Since(start))
				}
			}
		})
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		t.Logf("A: %d %v at +%v; order of answers: %v", aCode, aErr, aAt, order)
		if aErr != nil || aCode != http.StatusOK {
			t.Errorf("A, the probe that asked 8 minutes before B, got %d, %v; want it served", aCode, aErr)
		}
	})
}
