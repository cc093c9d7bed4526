package polite

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
)

// getUntil sends GETs of url through rt from n workers, each one after
// another, until ctx ends or a RoundTrip fails; the function it returns
// waits for them.
func getUntil(ctx context.Context, rt http.RoundTripper, n int, url string) (wait func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				resp, err := rt.RoundTrip(req)
				if err != nil {
					return
				}
				resp.Body.Close()
			}
		})
	}
	return wg.Wait
}

// peakCounter counts requests in flight and their peak.
type peakCounter struct{ In, Peak atomic.Int64 }

// Enter counts a request in.
func (p *peakCounter) Enter() {
	in := p.In.Add(1)
	for q := p.Peak.Load(); in > q && !p.Peak.CompareAndSwap(q, in); q = p.Peak.Load() {
	}
}

// Leave counts a request out.
func (p *peakCounter) Leave() { p.In.Add(-1) }
