package ratelimittest_test

import (
	"bytes"
	"log"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite/ratelimittest"
)

// A Handler's panic (other than http.ErrAbortHandler) is logged, as
// net/http's server logs it, but it was logged with the request's URL
// where net/http writes the client's address: its query, which may hold a
// credential (an api_key=..., which polite itself never shows: "the
// request's method and URL path (never its query, which may hold a
// secret)"), went to the process's log whole. URL.Redacted hides a
// password only.
func TestPanicLogHidesQuery(t *testing.T) {
	const secret = "sk-live-F0UND-SECRET"
	var out bytes.Buffer
	flags, w := log.Flags(), log.Writer()
	log.SetOutput(&out)
	defer func() { log.SetOutput(w); log.SetFlags(flags) }()

	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") })
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.example/v1/items?api_key="+secret, nil)
		if _, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req); err == nil {
			t.Fatal("RoundTrip of a panicking Handler succeeded")
		}
	})
	if s := out.String(); !strings.Contains(s, "boom") {
		t.Fatalf("the panic was not logged: %q", s)
	} else if strings.Contains(s, secret) {
		line, _, _ := strings.Cut(s, "\n")
		t.Errorf("the panic's log shows the request's query: %s", line)
	}
}
