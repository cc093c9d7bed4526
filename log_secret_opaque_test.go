package polite_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
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

// A log record's error and an event's Err hide the user information of
// an Opaque that is an absolute URL ("//alice:pw@api.test/p"), which
// net/http sends as it is, should Base's error quote the URL: only the
// URL's User was hidden, which is nil for such a request, and the
// password was shown. Escaped in the Opaque, or in a form url.Parse
// refuses, it is hidden as written; and beside a URL's User too, which
// net/http does not send when the Opaque is an absolute URL (the first
// fix hid the Opaque's only when User was nil).
func TestOpaqueUserinfoHidden(t *testing.T) {
	for _, tc := range []struct {
		user           *url.Userinfo
		opaque, secret string
	}{
		{nil, "//alice:hunter2-pw@api.test/p", "hunter2-pw"},
		{nil, "http://alice:hunter2-pw@api.test/p", "hunter2-pw"},
		{nil, "//alice:hunter%32-pw@api.test/p", "hunter%32-pw"},
		{nil, "//alice:hunter%32-pw@api.test/p", "hunter2-pw"},
		{nil, "//alice:hunter%zz-pw@api.test/p", "hunter%zz-pw"},
		{nil, "//alice-token-123@api.test/p", "alice-token-123"},
		{url.UserPassword("bob", "bobs-pw-9"), "//alice:hunter2-pw@api.test/a%2Fb", "hunter2-pw"},
		{url.UserPassword("bob", "bobs-pw-9"), "//alice:hunter2-pw@api.test/a%2Fb", "bobs-pw-9"},
		{url.User("svc"), "//alice:hunter2-pw@api.test/a%2Fb", "hunter2-pw"},
		{url.UserPassword("alice", "hunter~pw"), "//alice:hunter%7Epw@api.test/a%2Fb", "hunter%7Epw"},
		// An Opaque's empty user information: hiding its spelling, "@",
		// hid the "@" that ends the URL's "name:xxxxx@", and the name,
		// a token, was shown.
		{url.UserPassword("ghp_t0kenvalue", "x-oauth-basic"), "//api.test/x", "ghp_t0kenvalue"},
		{url.UserPassword("ghp_t0kenvalue", "x-oauth-basic"), "//@api.test/x", "ghp_t0kenvalue"},
		{url.UserPassword("ghp_t0kenvalue", "x-oauth-basic"), "https://@api.test/x", "ghp_t0kenvalue"},
	} {
		t.Run(tc.opaque, func(t *testing.T) {
			var logs bytes.Buffer
			var errs []string
			synctest.Test(t, func(t *testing.T) {
				tr := &polite.Transport{
					RetryTransient: true,
					MaxAttempts:    1,
					Logger:         slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
					OnEvent: func(e polite.Event) {
						if e.Err != nil {
							errs = append(errs, e.Err.Error(), slog.AnyValue(e).Resolve().String())
						}
					},
					Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
						// Quoted as written, decoded, and redacted with
						// its User, as a Base that logs its URL's parts
						// may.
						u, _ := url.Parse(r.URL.Opaque)
						redacted := (&url.URL{Scheme: "https", User: r.URL.User, Host: "api.test", Path: "/x"}).Redacted()
						return nil, fmt.Errorf("GET %s (%v, %s): %w", r.URL, u, redacted, io.ErrUnexpectedEOF)
					}),
				}
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
				req.URL = &url.URL{Scheme: "http", Host: "api.test", User: tc.user, Opaque: tc.opaque}
				if _, err := tr.RoundTrip(req); err == nil {
					t.Fatal("RoundTrip: no error")
				}
			})
			if !strings.Contains(logs.String(), "EOF") || len(errs) == 0 {
				t.Fatalf("no error logged or in an event: %s", logs.String())
			}
			if strings.Contains(logs.String(), tc.secret) {
				t.Errorf("the log shows %q:\n%s", tc.secret, logs.String())
			}
			for _, s := range errs {
				if strings.Contains(s, tc.secret) {
					t.Errorf("an event shows %q: %s", tc.secret, s)
				}
			}
		})
	}
}
