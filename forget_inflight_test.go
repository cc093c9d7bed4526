package polite_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// Budget.MaxConcurrency "is the most requests in flight under one key, by
// all the Budget's Transports together ... whatever the server says".
// Budget.Forget while a request was in flight dropped its lease with the
// rest of the key's state: the next request went beside it, and the
// ceiling was exceeded until the old requests ended (MemoryStore keeps a
// key with a request in flight from eviction for this reason: "evicted,
// its next request went beside the first"). Inspect showed InFlight 0
// meanwhile.
func TestForgetKeepsRequestsInFlight(t *testing.T) {
	for _, name := range []string{"MemoryStore", "Store"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var inflight, most atomic.Int32
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					n := inflight.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					time.Sleep(time.Second)
					inflight.Add(-1)
					return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				b := &polite.Budget{MaxConcurrency: 1}
				if name == "Store" {
					b.Store = newBytesStore()
				}
				tr := &polite.Transport{Base: base, Budget: b}
				one := func() {
					req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
					if resp, err := tr.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
				}
				one() // the key's probe: open now
				go one()
				synctest.Wait() // in flight
				b.Forget("http://api.test")
				st, _ := b.Inspect("http://api.test", time.Now())
				go one()
				time.Sleep(3 * time.Second)
				if m := most.Load(); m > 1 {
					t.Errorf("with Budget.MaxConcurrency 1, %d requests were in flight at once after Forget (Inspect after Forget: InFlight %d)", m, st.InFlight)
				}
			})
		})
	}
}

// A request in flight when its key is forgotten is still the key's: a
// refusal it brings back pauses the key, as the answer of a request of the
// forgotten state did before its lease was kept.
func TestForgetInFlightRefusalStillPauses(t *testing.T) {
	for _, name := range []string{"MemoryStore", "Store"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					<-release
					return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"60"}}, Body: http.NoBody, Request: r}, nil
				})
				b := &polite.Budget{MaxConcurrency: 1}
				if name == "Store" {
					b.Store = newBytesStore()
				}
				tr := &polite.Transport{Base: base, Budget: b, MaxAttempts: 1}
				done := make(chan struct{})
				go func() {
					defer close(done)
					req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
					if resp, err := tr.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
				}()
				synctest.Wait() // in flight
				b.Forget("http://api.test")
				close(release)
				<-done
				st, ok := b.Inspect("http://api.test", time.Now())
				if !ok || st.InFlight != 0 || time.Until(st.PauseUntil) < 59*time.Second {
					t.Errorf("after the refusal of a request in flight at Forget: ok %v, InFlight %d, paused for %v; want none in flight and a pause of a minute", ok, st.InFlight, time.Until(st.PauseUntil))
				}
			})
		})
	}
}
