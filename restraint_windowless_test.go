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

// A limit with no window and nothing left stated (X-RateLimit-Limit
// alone, a RateLimit-Policy with q and no w) paces nothing: an origin
// that sends only that on every answer stays under Restraint. It lifted
// Restraint for good, and 16 workers went at once where Restraint allows
// 4.
func TestRestraintKeptByWindowlessLimit(t *testing.T) {
	for name, hdr := range map[string][2]string{
		"x-ratelimit-limit alone": {"X-RateLimit-Limit", "1000"},
		"policy q without w":      {"RateLimit-Policy", `"d";q=1000`},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var in, peak atomic.Int64
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n := in.Add(1)
					defer in.Add(-1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					w.Header().Set(hdr[0], hdr[1])
					time.Sleep(100 * time.Millisecond)
				})
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Restraint: &polite.Restraint{}}
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				var wg sync.WaitGroup
				var done atomic.Int64
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
							done.Add(1)
						}
					})
				}
				wg.Wait()
				if p := peak.Load(); p > 4 {
					t.Errorf("%d requests in flight at once (%d answered in 10s) to an origin whose only field, %s: %s, paces nothing; want at most Restraint's 4", p, done.Load(), hdr[0], hdr[1])
				}
			})
		})
	}
}
