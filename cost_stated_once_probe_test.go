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
// fixed window) with its remaining (RateLimit) on its first answer only
// (the endpoint that spends points was called once), and on the others
// nothing, or its policy alone (RateLimit-Policy with no RateLimit, as
// draft-11 allows: a policy says what the quota is, never what is left of
// a window). The requests declare no cost. The window whose remaining was
// stated is probed once it ends; the windows renewed after it are not, as
// a quota of requests stated once goes stale once. Probed at every
// window's end, the key sent one request alone each second: 20.9 s for an
// ideal 18.75 s, with 285 waits for a probe; 19 s now. With the default
// MemoryStore, and with a Store that keeps the binary form.
func TestCostQuotaStatedOnceProbedOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy bool // the policy alone on every answer after the first
		store  bool // a Store that keeps the binary form
	}{
		{"nothing after", false, false},
		{"policy alone after", true, false},
		{"policy alone after, binary Store", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int64
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					i := n.Add(1)
					time.Sleep(100 * time.Millisecond)
					h := http.Header{}
					if i == 1 || tc.policy {
						h.Set("RateLimit-Policy", `"pts";q=100000;qu="points";w=1`)
					}
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
				if tc.store {
					tr.Budget = &polite.Budget{Store: newBytesStore()}
				}
				got := run(t, &http.Client{Transport: tr}, "http://api.test/", 3000, 16)
				el := time.Since(t0)
				mu.Lock()
				defer mu.Unlock()
				if got[http.StatusOK] != 3000 || el > 20*time.Second || probeWaits != 0 {
					t.Errorf("3000 requests, 16 workers, 100 ms each: %v in %v (ideal 18.75 s), %d waits for a probe after the first 2 s; want at most 20 s and none: a points quota whose remaining was stated once is probed at every window's end", got, el, probeWaits)
				}
			})
		})
	}
}
