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

// retriedHeaderTimeout is http.Transport's ResponseHeaderTimeout error: a
// net.Error whose Timeout is true.
type retriedHeaderTimeout struct{}

func (retriedHeaderTimeout) Error() string   { return "net/http: timeout awaiting response headers" }
func (retriedHeaderTimeout) Timeout() bool   { return true }
func (retriedHeaderTimeout) Temporary() bool { return true }

// While a request that timed out counted toward the latency, as twice the
// smoothed latency at most, with RetryTransient every attempt of a
// hanging request was a timeout sample (8 by default): one request in 20
// to an endpoint that hangs past Base's ResponseHeaderTimeout of 2s made
// close to a third of the samples timeouts, srtt climbed to seconds
// against a 50ms baseline, and the limit of an origin that never queues
// was pinned at 1 of 16: 0.6 successes a second where 11.0 were (minutes
// 2-8). Timeouts are not counted, and this guards it.
func TestAdaptiveRetriedTimeoutsLeaveLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var n, served atomic.Int64
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			d := 50 * time.Millisecond // never queues
			if r.URL.Path == "/hangs" {
				d = 2 * time.Second
			}
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
			if r.URL.Path == "/hangs" {
				return nil, retriedHeaderTimeout{} // Base's ResponseHeaderTimeout
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &Transport{Base: base, RetryTransient: true, Restraint: &Restraint{MaxConcurrency: 16, Adaptive: true}}
		ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for ctx.Err() == nil {
					path := "/"
					if n.Add(1)%20 == 0 {
						path = "/hangs"
					}
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://app.example"+path, nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						continue
					}
					if resp.StatusCode == http.StatusOK && time.Since(start) >= 2*time.Minute {
						served.Add(1)
					}
					resp.Body.Close()
				}
			})
		}
		k := originKey("http", "app.example").m
		limit := func() int {
			sh := tr.ceil.shard(k)
			sh.mu.Lock()
			defer sh.mu.Unlock()
			if e := sh.m[k]; e != nil && e.grad != nil {
				return e.grad.limit()
			}
			return 0
		}
		time.Sleep(2 * time.Minute)
		var sum, samples int
		for time.Since(start) < 8*time.Minute-time.Second {
			time.Sleep(100 * time.Millisecond)
			sum += limit()
			samples++
		}
		cancel()
		wg.Wait()
		mean := float64(sum) / float64(samples)
		rate := float64(served.Load()) / (6 * 60)
		t.Logf("minutes 2-8: limit %.1f on average, %.1f answers of 50ms a second", mean, rate)
		if mean < 8 {
			t.Errorf("minutes 2-8: the limit was %.1f on average (MaxConcurrency 16; 15.9 before 55d7f4c) and %.1f requests a second were served (11.0 before), to an origin answering in 50ms whatever its load, one request in 20 hanging past Base's 2s timeout: each of RetryTransient's attempts counts as a timeout, and the origin reads as queueing", mean, rate)
		}
	})
}
