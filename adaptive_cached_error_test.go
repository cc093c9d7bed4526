package polite_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// Restraint.Adaptive's doc: no latency is counted from "an answer from a
// cache (an Age above 0), which says nothing of the origin's". The
// Transport tested for a 5xx first: a cached 5xx (CDNs cache 500s for
// seconds by default) was sampled as an error answer, counted whenever it
// was slower than the smoothed latency. A cache node slow to answer its
// cached 500s (1 s here, against an origin measured at 100 ms) brought
// the origin's limit down from 4 to 1.
func TestAdaptiveCachedErrorNotSampled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		switchAt := start.Add(10 * time.Second) // well after the first measurement (~1.6 s)
		var origin, cache peakCounter
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if time.Now().Before(switchAt) {
				origin.enter()
				time.Sleep(100 * time.Millisecond)
				origin.leave()
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			cache.enter()
			time.Sleep(time.Second)
			cache.leave()
			h := http.Header{"Age": {"5"}}
			return &http.Response{StatusCode: http.StatusInternalServerError, Header: h, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, Restraint: &polite.Restraint{Adaptive: true}} // limit 4
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/", nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						return
					}
					resp.Body.Close()
				}
			})
		}
		time.Sleep(switchAt.Sub(time.Now()) + 30*time.Second)
		cache.peak.Store(cache.in.Load())
		time.Sleep(30 * time.Second)
		cancel()
		wg.Wait()
		if p := origin.peak.Load(); p != 4 {
			t.Fatalf("peak in flight at the origin %d, want 4 (setup)", p)
		}
		if p := cache.peak.Load(); p < 4 {
			t.Errorf("peak in flight over the last 30s of cached 500s %d, want 4: a cache's answer (Age 5) that is a 5xx was sampled as the origin's latency", p)
		}
	})
}
