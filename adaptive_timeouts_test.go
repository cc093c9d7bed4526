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

// An origin answers in 50ms, then for 3 minutes in 10s (slowed to a
// crawl), then in 50ms again. A crawler whose http.Client has a Timeout of
// 5s saw every request of the slow spell fail with its deadline: errors,
// which Restraint.Adaptive did not sample. So it never learned that
// latency rose (from 50ms to more than 5s, 100 times its baseline): the
// limit stayed at MaxConcurrency for the whole spell, 16 requests in
// flight at once, each abandoned after 5s while the origin kept working
// on it (128 at the origin). The same crawler without a Timeout comes down
// to 1. A request that timed out is a bound below the latency now.
func TestAdaptiveSeesTimeouts(t *testing.T) {
	for _, timeout := range []time.Duration{0, 5 * time.Second} {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			var sent, peak, atOrigin, originPeak atomic.Int64
			var origin sync.WaitGroup
			base := roundTripper(func(r *http.Request) (*http.Response, error) {
				in := sent.Add(1)
				defer sent.Add(-1)
				for p := peak.Load(); in > p && !peak.CompareAndSwap(p, in); p = peak.Load() {
				}
				d := 50 * time.Millisecond
				if e := time.Since(start); e >= 2*time.Minute && e < 5*time.Minute {
					d = 10 * time.Second
				}
				done := make(chan struct{})
				origin.Go(func() { // the origin works on, whether or not the client waits
					in := atOrigin.Add(1)
					for p := originPeak.Load(); in > p && !originPeak.CompareAndSwap(p, in); p = originPeak.Load() {
					}
					time.Sleep(d)
					atOrigin.Add(-1)
					close(done)
				})
				select {
				case <-done:
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				case <-r.Context().Done():
					return nil, r.Context().Err()
				}
			})
			tr := &Transport{Base: base, Restraint: &Restraint{MaxConcurrency: 16, Adaptive: true}}
			client := &http.Client{Transport: tr, Timeout: timeout}
			ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			for range 64 {
				wg.Go(func() {
					for ctx.Err() == nil {
						req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://slow.example/", nil)
						resp, err := client.Do(req)
						if err != nil {
							continue
						}
						resp.Body.Close()
					}
				})
			}
			time.Sleep(4 * time.Minute)
			peak.Store(sent.Load())
			originPeak.Store(atOrigin.Load())
			time.Sleep(time.Minute) // the last minute of the slow spell
			p, op := peak.Load(), originPeak.Load()
			wg.Wait()
			origin.Wait()
			t.Logf("Client.Timeout %v: minute 4-5 of the slow spell: %d in flight from the client at most, %d at the origin", timeout, p, op)
			if p > 4 {
				t.Errorf("Client.Timeout %v: %d requests in flight at once (MaxConcurrency 16) in the third minute of 10s latencies against a 50ms baseline, want the adaptive limit down (without a Timeout it is 1): requests that time out are not sampled, so the rise is never seen", timeout, p)
			}
		})
	}
}
