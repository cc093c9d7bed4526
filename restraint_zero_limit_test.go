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
	"github.com/politehttp/polite/ratelimittest"
)

// A policy of q=0 (draft-11 allows 0) and no r paces nothing: the budget
// paces by a positive q. Restraint stays; lifted, the origin got every
// request the caller had in flight.
func TestRestraintKeptByZeroLimit(t *testing.T) {
	for _, policy := range []string{`"p";q=0;w=60`, `"c";q=0;qu="concurrent-requests"`} {
		t.Run(policy, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var in, peak atomic.Int64
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n := in.Add(1)
					defer in.Add(-1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					w.Header().Set("RateLimit-Policy", policy)
					time.Sleep(100 * time.Millisecond)
				})
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Restraint: &polite.Restraint{}}
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				var wg sync.WaitGroup
				for range 16 {
					wg.Go(func() {
						for ctx.Err() == nil {
							req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.example/", nil)
							resp, err := tr.RoundTrip(req)
							if err != nil {
								return
							}
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					})
				}
				wg.Wait()
				if p := peak.Load(); p > 4 {
					t.Errorf("%d in flight at once to an origin stating only %s (no r), which the budget paces by nothing; want at most Restraint's 4", p, policy)
				}
			})
		})
	}
}
