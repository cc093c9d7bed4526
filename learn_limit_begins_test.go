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

// A server that states nothing serves everything for 10 minutes, then
// begins to limit, refusing with bare 429s; 16 callers loop on one client
// (50 ms of latency). The first refusal's measurement spans the 10
// minutes the server served everything (nothing tells when its limit
// began), and the second, a halving, is as far off. The third counts what
// the server now takes, and is trusted in full: its window must be too, or
// the pace stays far below both (before: 40 of the 12,000 a fixed window of
// 10 a second would take in the 20 minutes from 10 minutes after it began
// to limit, one window of 10 every 5 minutes).
func TestLearnedQuotaAfterLimitBegins(t *testing.T) {
	for _, c := range []struct {
		name string
		p    ratelimittest.Policy
		min  float64 // the share of the server's capacity accepted, at least
	}{
		{"fixed window 10/1s", ratelimittest.Policy{Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: time.Second}, 0.75},
		// Measured from above, the window of 100 a minute comes out 1m8s to
		// 1m27s, and shortens a step every few learned windows: 0.50 to 0.85
		// over 8 runs.
		{"fixed window 100/1m", ratelimittest.Policy{Algorithm: ratelimittest.FixedWindow, Quota: 100, Window: time.Minute}, 0.4},
		{"token bucket 10/1s", ratelimittest.Policy{Algorithm: ratelimittest.TokenBucket, Quota: 10, Window: time.Second}, 0.75},
		{"sliding log 10/1s", ratelimittest.Policy{Algorithm: ratelimittest.SlidingLog, Quota: 10, Window: time.Second}, 0.75},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				c.p.Name = "api"
				open := ratelimittest.NewHandler(ratelimittest.Config{Dialect: ratelimittest.Bare429, Latency: 50 * time.Millisecond})
				limited := ratelimittest.NewHandler(ratelimittest.Config{
					Policies: []ratelimittest.Policy{c.p},
					Dialect:  ratelimittest.Bare429,
					Latency:  50 * time.Millisecond,
				})
				start := time.Now()
				const change, from, span = 10 * time.Minute, 10 * time.Minute, 20 * time.Minute
				var ok, refused atomic.Int64 // from `from` after the change, for span
				h := switched(start, open, limited, change, change+from, change+from+span, &ok, &refused)
				c16 := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}}
				loopUntil(c16, 16, start.Add(change+from+span))
				capacity := int64(c.p.Quota) * int64(span/c.p.Window)
				share := float64(ok.Load()) / float64(capacity)
				t.Logf("%v to %v after the server began to limit: %d accepted of %d (%.2f), %d refused",
					from, from+span, ok.Load(), capacity, share, refused.Load())
				if share < c.min {
					t.Errorf("%d accepted of the %d the server would take (%.2f), want %.2f at least",
						ok.Load(), capacity, share, c.min)
				}
			})
		})
	}
}
