package polite_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite"
)

// With Transport.Key set, an event's Err and a log record hide the path
// of the request, should Base's error quote its URL. net/http sends a
// URL's Opaque as its path (the documented way to send encoded slashes),
// and a request whose path was in Opaque had it shown: only Path and its
// escaped form were hidden.
func TestOpaquePathHiddenWithCustomKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, s := range opaqueErrors(t, "//api.test/tenants/acme-secret/items") {
			if strings.Contains(s, "acme-secret") {
				t.Errorf("event error shows the request's path with a custom Key: %q", s)
			}
		}
	})
}

// With Transport.Key set, Base's error has the request's path hidden, an
// Opaque's as sent too (TestOpaquePathHiddenWithCustomKey). An Opaque of a
// scheme and no '/' after it ("a:b://c/tenants/acme-secret",
// "x:tenants/acme-secret") is sent as it is, in the request line: once
// sentPath returned "" for such a form (a scheme with no path, as a server
// reads it), logError had no path to hide, and Base's error showed the
// Opaque. The Opaque is hidden whole now.
func TestOpaqueSchemeFormHiddenWithCustomKey(t *testing.T) {
	for _, opaque := range []string{"a:b://c/tenants/acme-secret", "x:tenants/acme-secret"} {
		t.Run(opaque, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				for _, s := range opaqueErrors(t, opaque) {
					if strings.Contains(s, "acme-secret") {
						t.Errorf("event error shows the request's Opaque with a custom Key: %q", s)
					}
				}
			})
		})
	}
}

// opaqueErrors sends a GET of api.test with opaque as its URL's Opaque
// through a Transport with a custom Key whose Base fails with an error
// quoting the URL, retried once, and returns the texts of the events'
// Err; it fails t if there is none.
func opaqueErrors(t *testing.T, opaque string) []string {
	t.Helper()
	var got []string
	tr := &polite.Transport{
		RetryTransient: true,
		MaxAttempts:    2,
		Key:            func(r *http.Request) string { return "tenant-account-key" },
		OnEvent: func(e polite.Event) {
			if e.Err != nil {
				got = append(got, e.Err.Error())
			}
		},
		Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return nil, &opaqueTimeout{fmt.Sprintf("dial %s: i/o timeout", r.URL)}
		}),
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
	req.URL = &url.URL{Scheme: "http", Host: "api.test", Opaque: opaque}
	if resp, _ := tr.RoundTrip(req); resp != nil {
		resp.Body.Close()
	}
	if len(got) == 0 {
		t.Fatal("no event carried Base's error")
	}
	return got
}

type opaqueTimeout struct{ msg string }

func (e *opaqueTimeout) Error() string   { return e.msg }
func (e *opaqueTimeout) Timeout() bool   { return true }
func (e *opaqueTimeout) Temporary() bool { return true }
