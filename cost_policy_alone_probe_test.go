package polite_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// An honest server states a quota of points (100000 a second, IETF, a
// fixed window) with its remaining (RateLimit) on its first answer only,
// and its policy alone (RateLimit-Policy, no RateLimit) on every answer
// after, as draft-11 allows: the policy says what the quota is, never what
// is left of a window. The requests declare no cost. As in
// TestCostQuotaStatedOnceProbedOnce, only the window whose remaining was
// stated is probed once it ends, not the windows renewed after it: an
// answer stating the policy alone was taken for one stating the window,
// and each window's end was probed, a request alone each second, for good
// (20.9 s and 285 waits for a probe).
// with a Store that keeps the binary form.
func TestCostQuotaPolicyAloneNotProbed(t *testing.T) {
	for _, store := range []bool{false, true} {
		name := "MemoryStore"
		if store {
			name = "binary Store"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int64
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					i := n.Add(1)
					time.Sleep(100 * time.Millisecond)
					h := http.Header{}
					h.Set("RateLimit-Policy", `"pts";q=100000;qu="points";w=1`)
					if i == 1 {
						h.Set("RateLimit", `"pts";r=99999;t=1`)
					}
					return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: r}, nil
				})
				t0 := time.Now()
				var mu sync.Mutex
				probeWaits := 0
				tr := &polite.Transport{Base: base, OnEvent: func(e polite.Event) {
					if e.Kind == polite.EventWait && e.Reason == polite.ReasonProbe && e.Time.Sub(t0) > 2*time.Second {
						mu.Lock()
						probeWaits++
						mu.Unlock()
					}
				}}
				if store {
					tr.Budget = &polite.Budget{Store: newBytesStore()}
				}
				got := run(t, &http.Client{Transport: tr}, "http://api.test/", 3000, 16)
				el := time.Since(t0)
				mu.Lock()
				defer mu.Unlock()
				if got[http.StatusOK] != 3000 || el > 20*time.Second || probeWaits != 0 {
					t.Errorf("3000 requests, 16 workers, 100 ms each: %v in %v (ideal 18.75 s), %d waits for a probe after the first 2 s; want at most 20 s and none, as when no answer states the policy after the first (TestCostQuotaStatedOnceProbedOnce): a points quota whose remaining was stated once, its policy alone since, is probed at every window's end", got, el, probeWaits)
				}
			})
		})
	}
}
