package polite_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A content-bytes policy stated with q and w and no r (RateLimit-Policy
// alone) paces nothing: the budget paces bytes only by what is left.
// Restraint stays. Lifted, the origin got 16 requests in flight and about
// 78 KB a second where it stated 1000 bytes a second.
func TestRestraintKeptByBytesLimitWithoutRemaining(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var in, peak, starts atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			starts.Add(1)
			n := in.Add(1)
			defer in.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			w.Header().Set("RateLimit-Policy", `"b";q=1000;w=1;qu="content-bytes"`)
			time.Sleep(100 * time.Millisecond)
			io.WriteString(w, strings.Repeat("x", 500))
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
			t.Errorf("%d in flight at once, %d responses of 500 bytes in 10s, to an origin stating only 1000 content-bytes per 1s (no r), which the budget paces by nothing; want at most Restraint's 4", p, starts.Load())
		}
	})
}
