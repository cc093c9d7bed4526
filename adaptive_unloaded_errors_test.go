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

// An origin that never queues (every latency independent of its load)
// but has one endpoint that is slow to fail, or one that hangs past the
// client's Timeout, is not read as queueing: a slow error is a sample like
// any, in the baseline too, and a request that timed out is none. (Taken
// into the smoothed latency but kept out of the baseline, re-measured
// every 5 minutes from successes only, they held the limit at 1 of 16.)
func TestAdaptiveUnloadedOriginWithSlowErrors(t *testing.T) {
	t.Parallel() // a bubble of its own: only the CPU is shared
	for _, tc := range []struct {
		name    string
		timeout time.Duration // http.Client.Timeout
		every   int64         // one request in every is to the failing endpoint
		fail    func(r *http.Request) (*http.Response, error)
	}{
		{"slow 500", 0, 4, func(r *http.Request) (*http.Response, error) {
			time.Sleep(400 * time.Millisecond) // fails after 400ms, whatever the load
			return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}},
		{"hung endpoint behind Client.Timeout", 2 * time.Second, 20, func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done() // never answers, whatever the load
			return nil, r.Context().Err()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n, inflight, peak atomic.Int64
				base := roundTripper(func(r *http.Request) (*http.Response, error) {
					in := inflight.Add(1)
					defer inflight.Add(-1)
					for p := peak.Load(); in > p && !peak.CompareAndSwap(p, in); p = peak.Load() {
					}
					if r.URL.Path == "/broken" {
						return tc.fail(r)
					}
					time.Sleep(50 * time.Millisecond) // never queues
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				tr := &Transport{Base: base, Restraint: &Restraint{MaxConcurrency: 16, Adaptive: true}}
				client := &http.Client{Transport: tr, Timeout: tc.timeout}
				ctx, cancel := context.WithTimeout(t.Context(), 7*time.Minute)
				defer cancel()
				var wg sync.WaitGroup
				for range 64 {
					wg.Go(func() {
						for ctx.Err() == nil {
							path := "/ok"
							if n.Add(1)%tc.every == 0 {
								path = "/broken"
							}
							req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://app.example"+path, nil)
							resp, err := client.Do(req)
							if err == nil {
								resp.Body.Close()
							}
						}
					})
				}
				time.Sleep(2 * time.Minute)
				peak.Store(inflight.Load())
				// Minutes 2-7, a re-measurement of the baseline: the mean
				// in flight, sampled every 100ms.
				var sum, samples int64
				for range 3000 {
					time.Sleep(100 * time.Millisecond)
					sum += inflight.Load()
					samples++
				}
				p := peak.Load()
				mean := float64(sum) / float64(samples)
				k := originKey("http", "app.example").m
				sh := tr.ceil.shard(k)
				sh.mu.Lock()
				if e := sh.m[k]; e != nil && e.grad != nil {
					t.Logf("baseline %v, smoothed latency %v, limit %d, peak %d, mean in flight %.1f", e.grad.base, e.grad.srtt, e.grad.limit(), p, mean)
				}
				sh.mu.Unlock()
				cancel()
				wg.Wait()
				if mean < 8 {
					t.Errorf("minutes 2-7: %.1f requests in flight on average, %d at most (MaxConcurrency 16) to an origin whose latencies never depend on its load: its slow errors or timeouts read as queueing", mean, p)
				}
			})
		})
	}
}
