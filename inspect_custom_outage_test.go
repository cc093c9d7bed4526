package polite_test

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A custom key in an origin's normal form ("acct://<hex token>"), first
// used while the Store failed, where it learned a pause; the Store answers
// again and holds no state for it. Inspect showed the key verbatim, the
// fresh state it read from the Store not marked custom, though the
// fallback's entry was; it shows its fingerprint, as Budget.Inspect and
// State.Key promise.
func TestInspectCustomKeyLearnedInOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const secret = "acct://9f86d081884c7d65"
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		st := newBytesStore()
		st.failing.Store(true)
		tr := &polite.Transport{
			Base:        &ratelimittest.Transport{Handler: h},
			Budget:      &polite.Budget{Store: st},
			Key:         func(*http.Request) string { return secret },
			MaxAttempts: 1,
		}
		c := &http.Client{Transport: tr}
		if code, _ := get(t, c, "http://api.test/"); code != http.StatusTooManyRequests {
			t.Fatalf("first request: %d, want the 429", code)
		}
		// While the Store fails, Inspect shows the fallback's state.
		if s, ok := tr.Inspect(secret, time.Now()); !ok || strings.Contains(s.Key, "9f86d081884c7d65") {
			t.Errorf("Inspect while the Store fails: Key %q ok %v, want a fingerprint", s.Key, ok)
		}
		st.failing.Store(false)
		time.Sleep(1100 * time.Millisecond) // the Budget asks the Store again
		s, ok := tr.Inspect(secret, time.Now())
		if !ok {
			t.Fatal("Inspect after the outage: no state, want the pause learned in it")
		}
		if strings.Contains(s.Key, "9f86d081884c7d65") {
			t.Errorf("Inspect(custom key).Key = %q: the custom key verbatim, want its fingerprint (key-xxxxxxxx)", s.Key)
		}
	})
}
