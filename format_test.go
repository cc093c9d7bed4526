package polite_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// A key from a custom Transport.Key "may hold a credential: such a key
// appears in events, logs, errors and Inspect only as a fingerprint"
// (package doc), and KeyState formats itself so that "a Store that logs
// the states it keeps must not show them whole". Yet fmt of a MemoryStore,
// or of a Transport (whose Budget and local ceilings are kept inline),
// printed the maps that key them: the custom key verbatim; and fmt of a
// Budget the secret of its fingerprints.
func TestFormatHidesCustomKey(t *testing.T) {
	const secret = "Bearer sk-live-F0UND-SECRET"
	ok := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	key := func(r *http.Request) string { return r.Header.Get("Authorization") }
	send := func(t *testing.T, tr *polite.Transport) {
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
		req.Header.Set("Authorization", secret)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	t.Run("MemoryStore", func(t *testing.T) {
		ms := &polite.MemoryStore{}
		send(t, &polite.Transport{Base: ok, Key: key, Budget: &polite.Budget{Store: ms}})
		for _, verb := range []string{"%v", "%+v", "%#v"} {
			if s := fmt.Sprintf(verb, ms); strings.Contains(s, secret) {
				t.Errorf("fmt %s of a *MemoryStore shows the custom key verbatim: ...%s...", verb, around(s, secret))
			}
		}
	})
	t.Run("Transport", func(t *testing.T) {
		tr := &polite.Transport{Base: ok, Key: key, MaxConcurrency: 2} // its own Budget and ceilings, inline
		send(t, tr)
		for _, verb := range []string{"%v", "%+v", "%#v"} {
			if s := fmt.Sprintf(verb, tr); strings.Contains(s, secret) {
				t.Errorf("fmt %s of a *Transport shows the custom key verbatim: ...%s...", verb, around(s, secret))
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
