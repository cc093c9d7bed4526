package polite

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Restraint.Adaptive counted a 500's latency as any answer's. An origin
// whose application fails at once for its first 10 seconds (a deploy, a
// warm-up: 500 in 1ms), then serves every request in 50ms whatever its
// load (it never queues), got a baseline of 1ms from its errors; every
// answer after read as 50 times the baseline, and the limit was held at 1
// of 16 until the next measurement, 5 minutes later. DESIGN.md named this
// very failure for a gateway's quick 502s, but excluded them only under
// RetryTransient. A 5xx is a bound below the latency now: it never makes
// the baseline.
func TestAdaptiveQuickErrorsSetNoBaseline(t *testing.T) {
	t.Parallel() // a bubble of its own: only the CPU is shared
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var inflight, peak atomic.Int64
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			in := inflight.Add(1)
			defer inflight.Add(-1)
			for p := peak.Load(); in > p && !peak.CompareAndSwap(p, in); p = peak.Load() {
			}
			if time.Since(start) < 10*time.Second {
				time.Sleep(time.Millisecond)
				return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			time.Sleep(50 * time.Millisecond)
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &Transport{Base: base, Restraint: &Restraint{MaxConcurrency: 16, Adaptive: true}}
		ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://app.example/", nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						continue
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						time.Sleep(100 * time.Millisecond) // a crawler notes the error and moves on
					}
				}
			})
		}
		time.Sleep(time.Minute)
		peak.Store(inflight.Load())
		time.Sleep(3 * time.Minute)
		p := peak.Load()
		wg.Wait()
		k := originKey("http", "app.example").m
		sh := tr.ceil.shard(k)
		sh.mu.Lock()
		if e := sh.m[k]; e != nil && e.grad != nil {
			t.Logf("baseline %v, smoothed latency %v, limit %d", e.grad.base, e.grad.srtt, e.grad.limit())
		}
		sh.mu.Unlock()
		if p < 4 {
			t.Errorf("minutes 1-4: at most %d requests in flight (MaxConcurrency 16, starting limit 4) to an origin serving every request in 50ms, never queueing: 10 seconds of quick 500s became its baseline", p)
		}
	})
}
