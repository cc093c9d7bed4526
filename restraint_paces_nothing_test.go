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

// restraintPeak runs 16 workers for 10 s, in a synctest bubble, against
// an origin that answers in 100 ms with the header field k: v and body,
// through a Transport with Restraint, and returns the most requests it
// had in flight at once and how many it answered.
func restraintPeak(t *testing.T, k, v, body string) (peak, answered int64) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		var in, most, n atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			now := in.Add(1)
			defer in.Add(-1)
			for p := most.Load(); now > p && !most.CompareAndSwap(p, now); p = most.Load() {
			}
			w.Header().Set(k, v)
			time.Sleep(100 * time.Millisecond)
			io.WriteString(w, body)
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
					n.Add(1)
				}
			})
		}
		wg.Wait()
		peak, answered = most.Load(), n.Load()
	})
	return peak, answered
}

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
			if p, n := restraintPeak(t, hdr[0], hdr[1], ""); p > 4 {
				t.Errorf("%d requests in flight at once (%d answered in 10s) to an origin whose only field, %s: %s, paces nothing; want at most Restraint's 4", p, n, hdr[0], hdr[1])
			}
		})
	}
}

// A content-bytes policy stated with q and w and no r (RateLimit-Policy
// alone) paces nothing: the budget paces bytes only by what is left.
// Restraint stays. Lifted, the origin got 16 requests in flight and about
// 78 KB a second where it stated 1000 bytes a second.
func TestRestraintKeptByBytesLimitWithoutRemaining(t *testing.T) {
	policy := `"b";q=1000;w=1;qu="content-bytes"`
	if p, n := restraintPeak(t, "RateLimit-Policy", policy, strings.Repeat("x", 500)); p > 4 {
		t.Errorf("%d in flight at once, %d responses of 500 bytes in 10s, to an origin stating only %s (no r), which the budget paces by nothing; want at most Restraint's 4", p, n, policy)
	}
}

// A policy of q=0 (draft-11 allows 0) and no r paces nothing: the budget
// paces by a positive q. Restraint stays; lifted, the origin got every
// request the caller had in flight.
func TestRestraintKeptByZeroLimit(t *testing.T) {
	for _, policy := range []string{`"p";q=0;w=60`, `"c";q=0;qu="concurrent-requests"`} {
		t.Run(policy, func(t *testing.T) {
			if p, _ := restraintPeak(t, "RateLimit-Policy", policy, ""); p > 4 {
				t.Errorf("%d in flight at once to an origin stating only %s (no r), which the budget paces by nothing; want at most Restraint's 4", p, policy)
			}
		})
	}
}

// A quota that paces still lifts Restraint: a remaining count, a limit of
// requests with its window, a limit of requests in flight.
func TestRestraintLiftedByPacingQuota(t *testing.T) {
	for name, hdr := range map[string][2]string{
		"remaining":        {"X-RateLimit-Remaining", "1000000"},
		"policy q and w":   {"RateLimit-Policy", `"p";q=1000000;w=1`},
		"concurrency q=10": {"RateLimit-Policy", `"c";q=10;qu="concurrent-requests"`},
	} {
		t.Run(name, func(t *testing.T) {
			if p, _ := restraintPeak(t, hdr[0], hdr[1], ""); p <= 4 {
				t.Errorf("%d in flight at most to an origin stating %s: %s, which paces; want Restraint lifted (more than 4)", p, hdr[0], hdr[1])
			}
		})
	}
}
