package polite_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite"
)

// DESIGN.md §3 "When a Store fails": requests the Store granted are not
// counted in the fallback, so across the switch up to twice the ceiling
// may be in flight, once, until those requests end. Here the Store's
// request ends while the Store fails: its release goes to the fallback,
// whose state for the key was first used at the same instant as the
// Store's (a frozen or coarse clock). The fallback took the Store's lease
// for its own and freed the slot of its own request still in flight: a
// third request went with two in flight under MaxConcurrency 1, after the
// Store's request ended.
func TestFallbackTakesNoStoreLeaseForItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newBytesStore()
		gates := map[string]chan struct{}{"/a": make(chan struct{}), "/b": make(chan struct{})}
		var inflight, peakAfterA atomic.Int64
		var aDone atomic.Bool
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n := inflight.Add(1)
			if aDone.Load() && n > peakAfterA.Load() {
				peakAfterA.Store(n)
			}
			if g := gates[r.URL.Path]; g != nil {
				<-g
			}
			inflight.Add(-1)
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, Budget: &polite.Budget{Store: st, MaxConcurrency: 1}}
		var wg sync.WaitGroup
		do := func(path string) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := getErr(tr, "http://api.test"+path); err != nil {
					t.Errorf("%s: %v", path, err)
				}
			}()
			synctest.Wait()
		}
		do("/a") // granted by the Store, in flight
		st.failing.Store(true)
		do("/b") // granted by the fallback (documented: not counting /a)
		aDone.Store(true)
		close(gates["/a"]) // /a ends; its release fails over to the fallback
		synctest.Wait()
		if inflight.Load() != 1 {
			t.Fatalf("in flight after /a ended = %d, want 1 (/b)", inflight.Load())
		}
		do("/c") // should wait for /b: MaxConcurrency 1, and /b is the fallback's probe
		if p := peakAfterA.Load(); p > 1 {
			t.Errorf("after the Store's request ended, %d requests in flight under Budget.MaxConcurrency 1", p)
		}
		close(gates["/b"])
		wg.Wait()
	})
}
