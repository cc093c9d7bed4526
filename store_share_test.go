package polite_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// Inspect judges a state at the instant it is given, whatever the Store:
// on a Store, it reported a state an hour past its IdleTTL of a minute,
// which MemoryStore reports forgotten.
func TestInspectLaterInstantOnStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, b := range []*polite.Budget{{IdleTTL: time.Minute}, {IdleTTL: time.Minute, Store: newBytesStore()}} {
			tr := &polite.Transport{Budget: b, Base: &ratelimittest.Transport{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}}
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if _, ok := b.Inspect("http://api.test", time.Now()); !ok {
				t.Fatalf("Store %T: no state right after a request", b.Store)
			}
			if st, ok := b.Inspect("http://api.test", time.Now().Add(time.Hour)); ok {
				t.Errorf("Store %T: Inspect an hour on, IdleTTL a minute: %+v, want none", b.Store, st)
			}
		}
	})
}

// Forget in one process is not undone by another sharing its Store: the
// process told to pause kept the pause in its fallback (for the Store's
// failures) and wrote it back into the shared state at its next request,
// though the Store never failed. Its request waited out the 30 s pause
// that Forget had cleared.
func TestForgetNotUndoneByOtherProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		base := &ratelimittest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				w.Header().Set("Retry-After", "30")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})}
		shared := newBytesStore()
		a := &polite.Budget{Store: shared}
		b := &polite.Budget{Store: shared}
		tb := &polite.Transport{Budget: b, MaxAttempts: 1, Base: base}
		get := func() {
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			resp, err := tb.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		get() // refused: B pauses the key for 30 s
		a.Forget("http://api.test")
		start := time.Now()
		get()
		if d := time.Since(start); d > 0 {
			t.Errorf("B's request after A's Forget waited %v, want none", d)
		}
	})
}
