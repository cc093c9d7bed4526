package polite_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/politehttp/polite"
)

// A value of Transport, Budget or MemoryStore has no Format method (theirs
// are on the pointer), and fmt prints its fields, unexported ones
// included, by reflection: a Transport's own Budget and local ceilings
// were kept inline (the custom key in the ceilings' map, the Budget's
// fingerprint secret), a MemoryStore's shards in a slice (the custom key
// in their maps). A caller's struct that holds one by value, printed
// through a pointer (nothing go vet objects to), showed them. They are
// behind pointers now, which fmt prints as addresses.
func TestFormatValueHidesCustomKey(t *testing.T) {
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
	t.Run("Transport", func(t *testing.T) {
		c := &struct {
			T    polite.Transport
			Name string
		}{Name: "api"}
		c.T.Base, c.T.Key, c.T.MaxConcurrency = ok, key, 2
		send(t, &c.T)
		for _, verb := range []string{"%v", "%+v"} {
			s := fmt.Sprintf(verb, c)
			if strings.Contains(s, secret) {
				t.Errorf("fmt %s of a struct holding a Transport shows the custom key verbatim: ...%s...", verb, around(s, secret))
			}
			if verb == "%+v" && strings.Contains(s, "secret:[") {
				t.Errorf("fmt %s of a struct holding a Transport shows its Budget's fingerprint secret: ...%s...", verb, around(s, "secret:["))
			}
		}
	})
	t.Run("MemoryStore", func(t *testing.T) {
		c := &struct {
			Store polite.MemoryStore
			Name  string
		}{Name: "api"}
		send(t, &polite.Transport{Base: ok, Key: key, Budget: &polite.Budget{Store: &c.Store}})
		for _, verb := range []string{"%v", "%+v"} {
			if s := fmt.Sprintf(verb, c); strings.Contains(s, secret) {
				t.Errorf("fmt %s of a struct holding a MemoryStore shows the custom key verbatim: ...%s...", verb, around(s, secret))
			}
		}
	})
}
