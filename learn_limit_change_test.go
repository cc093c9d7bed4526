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

// A server that states nothing raises a small limit as it runs: the
// learned quota of a request or two a window grows back to it. Pins that
// lasted 256 starts of the learned quota (42.7 minutes at 1 per 10 s),
// tried so that each lapse of the pins would cost fewer refusals, kept a
// fixed window raised from 1 to 5 per 10 s at 173 accepted in the 30
// minutes that followed, where 900 would be, and failed tasks the server
// would serve within MaxWait (DESIGN.md §6, "Left").
func TestLearnedQuotaAfterLimitRaised(t *testing.T) {
	for _, c := range []struct {
		name         string
		alg          ratelimittest.Algorithm
		dialect      ratelimittest.Dialect
		q1, q2       int64
		w, latency   time.Duration
		change, from time.Duration
		end          time.Duration
		workers      int
		min          int64 // accepted from `from` to end, at least
	}{
		{"fixed window 1 to 5 per 10s", ratelimittest.FixedWindow, ratelimittest.Bare429, 1, 5, 10 * time.Second, 50 * time.Millisecond,
			10 * time.Minute, 10 * time.Minute, 40 * time.Minute, 4, 450},
		{"fixed window 1 to 5 per 10s, Retry-After", ratelimittest.FixedWindow, ratelimittest.RetryAfterOnly, 1, 5, 10 * time.Second, 50 * time.Millisecond,
			10 * time.Minute, 10 * time.Minute, 40 * time.Minute, 8, 450},
		{"sliding window 1 to 3 per 1s", ratelimittest.SlidingWindow, ratelimittest.Bare429, 1, 3, time.Second, 0,
			2 * time.Minute, 4 * time.Minute, 10 * time.Minute, 8, 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				mk := func(q int64) http.Handler {
					return ratelimittest.NewHandler(ratelimittest.Config{
						Policies: []ratelimittest.Policy{{Name: "api", Algorithm: c.alg, Quota: q, Window: c.w}},
						Dialect:  c.dialect,
						Latency:  c.latency,
					})
				}
				start := time.Now()
				var ok, refused atomic.Int64
				h := switched(start, mk(c.q1), mk(c.q2), c.change, c.from, c.end, &ok, &refused)
				loopUntil(&http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}}, c.workers, start.Add(c.end))
				capacity := c.q2 * int64((c.end-c.from)/c.w)
				t.Logf("%v to %v: %d accepted of %d, %d refused", c.from, c.end, ok.Load(), capacity, refused.Load())
				if ok.Load() < c.min {
					t.Errorf("from %v to %v after the server raised its limit at %v: %d accepted of the %d it would take, want %d at least",
						c.from, c.end, c.change, ok.Load(), capacity, c.min)
				}
			})
		})
	}
}

// One caller loops on a server that states nothing and keeps a bucket it
// empties: its learned quota falls to a request or two a window, each
// decrease trusted in full (DESIGN.md §6). With a trusted decrease's
// window lowered as far as 70% of the rate refused (tried, and left:
// DESIGN.md §6, "Left"), a leaky bucket of 100
// per 5 minutes (burst 50) was learned at 1 per 4.04 s, stepped to 1 per
// 2.25 s where it takes one every 3 s, and a quota of one request, its
// lone probe refused, measured nothing and stayed: 746 refused in 100
// minutes, for 1,997 accepted. A token bucket of 100 a minute: 140
// refused for 2,002. Both are refused about 5% of the time as it is (105
// and 88), which a quota of one request that is never decreased leaves
// (DESIGN.md §6, "Left"): the bound is 6%.
func TestLearnedSmallQuotaOneCaller(t *testing.T) {
	for _, c := range []struct {
		name    string
		p       ratelimittest.Policy
		latency time.Duration
	}{
		{"leaky bucket 100/5m burst 50", ratelimittest.Policy{Algorithm: ratelimittest.LeakyBucket, Quota: 100, Window: 5 * time.Minute, Burst: 50}, 50 * time.Millisecond},
		{"token bucket 100/1m", ratelimittest.Policy{Algorithm: ratelimittest.TokenBucket, Quota: 100, Window: time.Minute}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				c.p.Name = "api"
				srv := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{c.p}, Dialect: ratelimittest.Bare429, Latency: c.latency})
				run := 30 * c.p.Window
				var ok, refused atomic.Int64
				start := time.Now()
				h := switched(start, srv, srv, 0, run/3, run, &ok, &refused)
				loopUntil(&http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}}, 1, start.Add(run))
				t.Logf("from %v to %v: %d accepted, %d refused", run/3, run, ok.Load(), refused.Load())
				if refused.Load() > ok.Load()*6/100 {
					t.Errorf("%d refused for %d accepted from %v to %v, want 6%% at most", refused.Load(), ok.Load(), run/3, run)
				}
			})
		})
	}
}
