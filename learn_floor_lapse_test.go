package polite_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A token bucket of 10 a second that states nothing (bare 429s) raises its
// rate tenfold, to 100 a second, at minute 5. 16 workers loop on requests
// (50 ms latency: 320 a second unpaced).
//
// doc.go: the learned quota "grows additively while it holds requests back
// without a refusal". A rate step refused before the change left the
// learner's floor set; the steps after it went half way to the floor,
// each holding, until the window was a nanosecond above it, and nothing
// cleared it: the learned quota stayed at 13 per 1.2 s, 10.6 a second
// accepted from minute 15 to 20, with no refusal. Steps that came within
// an eighth of the window of the floor are now pinned, which drops the
// floor when the pin lapses. The rate then stopped near 39 a second: each
// learned window at the even pace began with a lone probe whose round trip
// (50 ms) is longer than the pace's spacing, and a rate step on trial never
// saw a whole window of q starts. Such a window now has no lone probe
// (DESIGN.md §6): 100 a second, with 35 to 128 refused in those five
// minutes (0.1% to 0.4%, run to run).
func TestLearnedRateGrowsPastOldFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		mk := func(q int64) http.Handler {
			return ratelimittest.NewHandler(ratelimittest.Config{
				Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.TokenBucket, Quota: q, Window: time.Second}},
				Dialect:  ratelimittest.Bare429,
				Latency:  50 * time.Millisecond,
			})
		}
		slow, fast := mk(10), mk(100)
		start := time.Now()
		const change = 5 * time.Minute
		var okAfter, refAfter atomic.Int64 // minutes 15-20: 10 minutes after the change
		h := switched(start, slow, fast, change, 15*time.Minute, 20*time.Minute, &okAfter, &refAfter)
		loopUntil(&http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}}, 16, start.Add(20*time.Minute))
		rate := float64(okAfter.Load()) / (5 * time.Minute).Seconds()
		t.Logf("minutes 15-20 (server takes 100/s since minute 5): %.1f/s accepted, %d refused", rate, refAfter.Load())
		if rate < 80 || float64(refAfter.Load()) > 0.02*float64(okAfter.Load()) {
			t.Errorf("10 minutes after the server's rate went from 10/s to 100/s, polite sends %.1f/s with %d refusals; want 80/s at least, 2%% of them refused at most", rate, refAfter.Load())
		}
	})
}
