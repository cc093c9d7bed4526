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

// headerTimeoutError is http.Transport's ResponseHeaderTimeout error: a
// net.Error whose Timeout is true.
type headerTimeoutError struct{}

func (headerTimeoutError) Error() string   { return "net/http: timeout awaiting response headers" }
func (headerTimeoutError) Timeout() bool   { return true }
func (headerTimeoutError) Temporary() bool { return true }

// A timeout of Base's (ResponseHeaderTimeout) counts toward the latency,
// so that Adaptive sees an origin its client gives up on. With
// RetryTransient it was read as a transient failure instead (transientErr:
// any net.Error whose Timeout is true), retried or not, and Adaptive
// sampled nothing: the origin, slowed from 50ms to 10s, kept 16 requests
// in flight from the client (each abandoned after 5s and sent again) while
// the same client without RetryTransient came down.
func TestAdaptiveSeesBaseTimeoutsWithRetryTransient(t *testing.T) {
	for _, retry := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			var sent, peak atomic.Int64
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
				origin.Go(func() { time.Sleep(d); close(done) })
				select {
				case <-done:
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				case <-time.After(5 * time.Second): // Base's ResponseHeaderTimeout
					return nil, headerTimeoutError{}
				case <-r.Context().Done():
					return nil, r.Context().Err()
				}
			})
			tr := &Transport{Base: base, RetryTransient: retry, Restraint: &Restraint{MaxConcurrency: 16, Adaptive: true}}
			ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			for range 64 {
				wg.Go(func() {
					for ctx.Err() == nil {
						req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://slow.example/", nil)
						resp, err := tr.RoundTrip(req)
						if err != nil {
							continue
						}
						resp.Body.Close()
					}
				})
			}
			time.Sleep(4 * time.Minute)
			peak.Store(sent.Load())
			time.Sleep(time.Minute) // the last minute of the slow spell
			p := peak.Load()
			cancel()
			wg.Wait()
			origin.Wait()
			t.Logf("RetryTransient %v: minute 4-5 of the slow spell: %d in flight at most", retry, p)
			if p > 4 {
				t.Errorf("RetryTransient %v: %d requests in flight at once (MaxConcurrency 16) in the third minute of 10s latencies, each given up by Base's timeout after 5s, against a 50ms baseline: want the adaptive limit down, as without RetryTransient", retry, p)
			}
		})
	}
}
