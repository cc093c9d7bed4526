package polite_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// peakCounter counts requests in flight and their peak.
type peakCounter struct{ in, peak atomic.Int64 }

func (p *peakCounter) enter() {
	in := p.in.Add(1)
	for q := p.peak.Load(); in > q && !p.peak.CompareAndSwap(q, in); q = p.peak.Load() {
	}
}
func (p *peakCounter) leave() { p.in.Add(-1) }

// Restraint.Adaptive halves the limit while it re-measures the baseline,
// "for at most 17 round trips". The measurement ended only when a sample
// arrived past its end, and an answer from a cache (Age > 0) is no
// sample. When every answer came from a cache once the drain had begun
// (the pages a crawler asks for are now popular), the drain never ended:
// the limit stayed halved (2 of 4 here) for as long as the cache
// answered, minutes after the 17 round trips.
func TestAdaptiveDrainEndsWithCachedAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		// Misses until just after the re-measurement's drain began (the
		// first measurement ends about 1.6 s in, the drain about 5 min
		// after, its measurement 1.7 s long); hits after.
		switchAt := start.Add(5*time.Minute + 2500*time.Millisecond)
		var origin, cache peakCounter
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if time.Now().Before(switchAt) {
				origin.enter()
				time.Sleep(100 * time.Millisecond)
				origin.leave()
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			cache.enter()
			time.Sleep(50 * time.Millisecond)
			cache.leave()
			h := http.Header{"Age": {"120"}, "Cache-Control": {"public, max-age=600"}}
			return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
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
		time.Sleep(time.Minute)
		if p := origin.peak.Load(); p != 4 {
			t.Fatalf("peak in flight at the origin in the first minute %d, want 4 (setup)", p)
		}
		// A minute of cached answers, then a minute measured: far more
		// than 17 round trips of 100 ms after the drain began.
		time.Sleep(switchAt.Sub(time.Now()) + time.Minute)
		cache.peak.Store(cache.in.Load())
		time.Sleep(time.Minute)
		cancel()
		wg.Wait()
		if p := cache.peak.Load(); p < 4 {
			t.Errorf("peak in flight over the last minute %d, want 4: the adaptive limit stayed halved by a drain that only a sample (never a cache's answer) can end", p)
		}
	})
}
