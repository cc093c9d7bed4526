package polite_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// formatSecret is the custom key the format tests use: an
// Authorization value.
const formatSecret = "Bearer sk-live-F0UND-SECRET"

// okBase answers every request with a 200.
var okBase = roundTripFunc(func(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
})

// authKey is a custom Transport.Key built from a credential.
func authKey(r *http.Request) string { return r.Header.Get("Authorization") }

// sendSecret sends a GET of api.test through tr with formatSecret as its
// Authorization.
func sendSecret(t *testing.T, tr *polite.Transport) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	req.Header.Set("Authorization", formatSecret)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// A key from a custom Transport.Key "may hold a credential: such a key
// appears in events, logs, errors and Inspect only as a fingerprint"
// (package doc), and KeyState formats itself so that "a Store that logs
// the states it keeps must not show them whole". Yet fmt of a MemoryStore,
// or of a Transport (whose Budget and local ceilings are kept inline),
// printed the maps that key them: the custom key verbatim; and fmt of a
// Budget the secret of its fingerprints.
func TestFormatHidesCustomKey(t *testing.T) {
	t.Run("MemoryStore", func(t *testing.T) {
		ms := &polite.MemoryStore{}
		sendSecret(t, &polite.Transport{Base: okBase, Key: authKey, Budget: &polite.Budget{Store: ms}})
		for _, verb := range []string{"%v", "%+v", "%#v"} {
			if s := fmt.Sprintf(verb, ms); strings.Contains(s, formatSecret) {
				t.Errorf("fmt %s of a *MemoryStore shows the custom key verbatim: ...%s...", verb, around(s, formatSecret))
			}
		}
	})
	t.Run("Transport", func(t *testing.T) {
		tr := &polite.Transport{Base: okBase, Key: authKey, MaxConcurrency: 2} // its own Budget and ceilings, inline
		sendSecret(t, tr)
		for _, verb := range []string{"%v", "%+v", "%#v"} {
			if s := fmt.Sprintf(verb, tr); strings.Contains(s, formatSecret) {
				t.Errorf("fmt %s of a *Transport shows the custom key verbatim: ...%s...", verb, around(s, formatSecret))
			}
		}
	})
}

func TestFormatShowsSettings(t *testing.T) {
	ms := &polite.MemoryStore{MaxKeys: 10}
	b := &polite.Budget{Store: ms, MaxConcurrency: 2, IdleTTL: time.Minute}
	tr := &polite.Transport{Budget: b, MaxAttempts: 3, RetryTransient: true}
	var nilTransport *polite.Transport
	for _, c := range []struct {
		v    any
		want string
	}{
		{ms, "&polite.MemoryStore{MaxKeys: 10, Keys: 0}"},
		{b, "&polite.Budget{MaxKeys: 0, IdleTTL: 1m0s, Store: *polite.MemoryStore, MaxRate: 0, MaxConcurrency: 2, Lease: 0s}"},
		{tr, "&polite.Transport{Base: nil, Budget: *polite.Budget, Key: false, MaxWait: 0s, MaxAttempts: 3, MaxRate: 0, MaxConcurrency: 0, Robots: false, Restraint: false, RetryTransient: true, Cost: false}"},
		{nilTransport, "(*polite.Transport)(nil)"},
	} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			if got := fmt.Sprintf(verb, c.v); got != c.want {
				t.Errorf("fmt %s = %s, want %s", verb, got, c.want)
			}
		}
	}
}

// around returns the text of s around the first sub.
func around(s, sub string) string {
	i := strings.Index(s, sub)
	return s[max(0, i-40):min(len(s), i+len(sub)+10)]
}

// A value of Transport, Budget or MemoryStore has no Format method (theirs
// are on the pointer), and fmt prints its fields, unexported ones
// included, by reflection: a Transport's own Budget and local ceilings
// were kept inline (the custom key in the ceilings' map, the Budget's
// fingerprint secret), a MemoryStore's shards in a slice (the custom key
// in their maps), a Budget's keys to carry to a Store that failed in a
// slice (the custom key in it). A caller's struct that holds one by value, printed
// through a pointer (nothing go vet objects to), showed them. They are
// behind pointers now, which fmt prints as addresses.
func TestFormatValueHidesCustomKey(t *testing.T) {
	t.Run("Transport", func(t *testing.T) {
		c := &struct {
			T    polite.Transport
			Name string
		}{Name: "api"}
		c.T.Base, c.T.Key, c.T.MaxConcurrency = okBase, authKey, 2
		sendSecret(t, &c.T)
		for _, verb := range []string{"%v", "%+v"} {
			s := fmt.Sprintf(verb, c)
			if strings.Contains(s, formatSecret) {
				t.Errorf("fmt %s of a struct holding a Transport shows the custom key verbatim: ...%s...", verb, around(s, formatSecret))
			}
			if verb == "%+v" && strings.Contains(s, "secret:[") {
				t.Errorf("fmt %s of a struct holding a Transport shows its Budget's fingerprint secret: ...%s...", verb, around(s, "secret:["))
			}
		}
	})
	t.Run("Budget", func(t *testing.T) {
		// Its Store fails: the pause a refusal taught the fallback is
		// kept to carry to the Store, under its key (and the leaves of
		// requests that stop waiting are queued so).
		synctest.Test(t, func(t *testing.T) {
			c := &struct {
				B    polite.Budget
				Name string
			}{B: polite.Budget{Store: failingStore{}}, Name: "api"}
			refusing := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"60"}}, Body: http.NoBody, Request: r}, nil
			})
			sendSecret(t, &polite.Transport{Base: refusing, Key: authKey, Budget: &c.B, MaxAttempts: 1})
			for _, verb := range []string{"%v", "%+v"} {
				if s := fmt.Sprintf(verb, c); strings.Contains(s, formatSecret) {
					t.Errorf("fmt %s of a struct holding a Budget shows the custom key verbatim: ...%s...", verb, around(s, formatSecret))
				}
			}
		})
	})
	t.Run("MemoryStore", func(t *testing.T) {
		c := &struct {
			Store polite.MemoryStore
			Name  string
		}{Name: "api"}
		sendSecret(t, &polite.Transport{Base: okBase, Key: authKey, Budget: &polite.Budget{Store: &c.Store}})
		for _, verb := range []string{"%v", "%+v"} {
			if s := fmt.Sprintf(verb, c); strings.Contains(s, formatSecret) {
				t.Errorf("fmt %s of a struct holding a MemoryStore shows the custom key verbatim: ...%s...", verb, around(s, formatSecret))
			}
		}
	})
}

// failingStore fails every call, as a Store that cannot be reached does.
type failingStore struct{}

func (failingStore) Update(context.Context, string, func(*polite.KeyState)) error {
	return errors.New("store unreachable")
}

func (failingStore) Wait(context.Context, string, uint64, time.Time) error {
	return errors.New("store unreachable")
}
