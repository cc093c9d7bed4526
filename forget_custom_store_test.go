package polite_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// outsideMemoryStore is a MemoryStore the Budget does not know for one:
// it goes through the Store interface, as any other Store does.
type outsideMemoryStore struct{ *polite.MemoryStore }

// Budget.Inspect: "a custom key shaped like a URL ("https://api.example/a")
// is itself when b holds a state for it, and only then the origin it
// names"; Budget.Forget "clears what b knows of key", and reads the key
// the same way. Once the custom key u is forgotten, b holds no state for
// it: Inspect(u) names the origin, and a second Forget(u) clears the
// origin. With the in-memory store it does; with a Store, the state
// Forget leaves behind (its generation and an expiry, kept for the
// waiters) was taken for a state of u: Inspect(u) showed u's blank state
// by its fingerprint, hiding the origin's pause, and Forget(u) cleared
// that blank state again and again, never the origin.
func TestForgottenCustomKeyOnStoreIsNoState(t *testing.T) {
	for _, name := range []string{"MemoryStore", "MemoryStore as a Store", "Store"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					h := http.Header{}
					status := 200
					if r.Header.Get("X-Refuse") != "" {
						h.Set("Retry-After", "1200")
						status = http.StatusTooManyRequests
					}
					return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: 2, Request: r}, nil
				})
				budget := &polite.Budget{}
				switch name {
				case "MemoryStore as a Store":
					budget.Store = outsideMemoryStore{&polite.MemoryStore{}}
				case "Store":
					budget.Store = newBytesStore()
				}
				byOrigin := &polite.Transport{Base: base, Budget: budget, MaxAttempts: 1}
				byURL := &polite.Transport{Base: base, Budget: budget, Key: func(r *http.Request) string { return r.URL.String() }}
				const u = "https://api.example/items/1"

				req, _ := http.NewRequest(http.MethodGet, u, nil)
				req.Header.Set("X-Refuse", "1")
				resp, err := byOrigin.RoundTrip(req) // the origin is paused for 20 minutes
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				req, _ = http.NewRequest(http.MethodGet, u, nil)
				if resp, err = byURL.RoundTrip(req); err != nil { // a custom key, u itself
					t.Fatal(err)
				}
				resp.Body.Close()

				budget.Forget(u) // u's state: the origin's stays
				st, ok := budget.Inspect(u, time.Now())
				if !ok || st.Key != "https://api.example" || st.PauseUntil.IsZero() {
					t.Errorf("after Forget(%q) of the custom key, Inspect(%q) = key %q, paused until %v, %v; want the paused origin, which b holds, u's state being forgotten",
						u, u, st.Key, st.PauseUntil, ok)
				}
				budget.Forget(u) // now the origin's
				if st, ok := budget.Inspect("https://api.example", time.Now()); ok && !st.PauseUntil.IsZero() {
					t.Errorf("after a second Forget(%q), with no state held for the custom key, the origin is still paused for %v", u, time.Until(st.PauseUntil))
				}
			})
		})
	}
}
