package polite

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// Restraint.Adaptive: "the origin's baseline is the mean latency of its
// first 64 responses, measured again every 5 minutes under a light load".
// A server answers its first 64 requests slowly (2s: a cold cache, a
// warm-up), then serves 8 workers of 50ms. The measurement 5 minutes later
// found the smoothed latency below 1.1 times that baseline, so it did not
// drain: it measured under the full limit the client had reached (64 in
// flight, a queue of 56) and took the queueing for the baseline. The limit
// never came down: 30 minutes later the origin still queued 8 times its
// service time (median 400ms).
func TestGradientHighBaselineRecovers(t *testing.T) {
	const clients, workers = 64, 8
	n := 0
	service := func(time.Time) time.Duration {
		n++
		if n <= gradMeasureN {
			return 2 * time.Second
		}
		return ms(50)
	}
	g := newGradient(4, clients)
	res := simulate(clients, workers, service, g.limit, g.observe, 20*time.Minute, 30*time.Minute)
	t.Logf("minutes 20-30: median %v, %.1f req/s, limit %d, baseline %v, srtt %v", res.median, res.throughput, g.limit(), g.base, g.srtt)
	if res.median > 2*ms(50) {
		t.Errorf("median latency %v 20-30 minutes in (limit %d, baseline %v), want at most 2× the service time 50ms: the baseline re-measured under full load took the queue as the origin's own latency", res.median, g.limit(), g.base)
	}
}

// The same through a Transport: Restraint{MaxConcurrency: 64, Adaptive:
// true} against ratelimittest's queue server (8 workers of 50ms), whose
// first 64 answers take 2s more. Eight minutes in, three past the second
// measurement, 64 requests were still in flight, each waiting 400ms.
func TestRestraintHighBaselineRecovers(t *testing.T) {
	t.Parallel() // a bubble of its own: only the CPU is shared
	synctest.Test(t, func(t *testing.T) {
		const clients = 64
		h := ratelimittest.NewQueueHandler(ratelimittest.QueueConfig{QueueLen: 4 * clients})
		inner := &ratelimittest.Transport{Handler: h}
		var (
			n        atomic.Int64
			inflight atomic.Int64
			peak     atomic.Int64
			measure  atomic.Bool
		)
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			if n.Add(1) <= gradMeasureN {
				time.Sleep(2 * time.Second)
			}
			in := inflight.Add(1)
			if measure.Load() {
				for p := peak.Load(); in > p && !peak.CompareAndSwap(p, in); p = peak.Load() {
				}
			}
			defer inflight.Add(-1)
			return inner.RoundTrip(r)
		})
		tr := &Transport{Base: base, Restraint: &Restraint{MaxConcurrency: clients, Adaptive: true}}
		ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
		defer cancel()
		wait := getUntil(ctx, tr, clients, "http://q.example/")
		time.Sleep(7 * time.Minute)
		measure.Store(true)
		wait()
		if p := peak.Load(); p > 20 {
			t.Errorf("minute 7-8: %d requests in flight at the origin (8 workers of 50ms, queueing beyond), want the limit down to about 10-15: the baseline re-measured under full load took the queue as the origin's own latency", p)
		}
	})
}
