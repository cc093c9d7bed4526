package polite_test

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// cacheThenOrigin answers from a shared cache (Age > 0) in 1ms while hit
// is set, and from the origin in 100ms otherwise, whatever its load (the
// origin never queues), counting the origin's requests in flight.
type cacheThenOrigin struct {
	hit            atomic.Bool
	inflight, peak atomic.Int64
	served         atomic.Int64
}

func (c *cacheThenOrigin) RoundTrip(req *http.Request) (*http.Response, error) {
	if c.hit.Load() {
		time.Sleep(time.Millisecond)
		h := http.Header{}
		h.Set("Age", "120")
		h.Set("Cache-Control", "public, max-age=600")
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, ContentLength: 0, Request: req}, nil
	}
	in := c.inflight.Add(1)
	for p := c.peak.Load(); in > p && !c.peak.CompareAndSwap(p, in); p = c.peak.Load() {
	}
	time.Sleep(100 * time.Millisecond)
	c.inflight.Add(-1)
	c.served.Add(1)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, ContentLength: 0, Request: req}, nil
}

// Restraint.Adaptive lowers the limit "when its latency rises well above
// its own baseline" (the origin's). An answer from a cache (Age > 0) did
// not come from the origin, and the package says so elsewhere: its
// rate-limit fields never change a budget, and its start is given back.
// Its latency was sampled all the same: a cache's 1ms hits became the
// origin's baseline, and the limit collapsed from 4 to 1 against an
// origin that answers in 100ms and never queues.
func TestAdaptiveCachedAnswersSetNoBaseline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &cacheThenOrigin{}
		tr := &polite.Transport{
			Base:      base,
			Restraint: &polite.Restraint{Adaptive: true}, // limit 4
		}
		// A crawler's first pages are popular: served by the cache.
		base.hit.Store(true)
		for range 64 {
			req, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		// The deeper pages miss: the origin answers in 100ms, whatever
		// its load. 8 workers for 20s.
		base.hit.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/deep", nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						return
					}
					resp.Body.Close()
				}
			})
		}
		time.Sleep(10 * time.Second)
		base.peak.Store(base.inflight.Load())
		before := base.served.Load()
		wg.Wait()
		if p, n := base.peak.Load(), base.served.Load()-before; p < 4 || n < 300 {
			t.Errorf("over the last 10s: peak in flight at the origin %d, %d answered; want 4 and about 400: the cache's answers were sampled as the origin's baseline", p, n)
		}
	})
}
