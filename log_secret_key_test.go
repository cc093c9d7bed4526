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

// loggedWithKey returns the log records and the texts of the events' Err
// (with %v, %+v and %#v) for one request to rawURL (with header h) through a Transport whose
// custom Key is key, and whose Base fails with an error quoting quote(r).
func loggedWithKey(t *testing.T, rawURL string, h http.Header, key func(*http.Request) string, quote func(*http.Request) string) (logs string, errs []string) {
	var buf bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
			Key:    key,
			Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
			OnEvent: func(e polite.Event) {
				if e.Err != nil {
					errs = append(errs, fmt.Sprintf("%v | %+v | %#v", e.Err, e.Err, e.Err))
				}
			},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("sending %s: %w", quote(r), io.ErrUnexpectedEOF)
			})}
		req, err := http.NewRequest(http.MethodGet, rawURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range h {
			req.Header[k] = v
		}
		if _, err := tr.RoundTrip(req); err == nil {
			t.Fatal("no error")
		}
	})
	return buf.String(), errs
}

// The custom key was hidden first, before the query: a key that is one
// of the query's values (Google's "?key=AIza..."), hidden, left the query
// no longer matching itself, and its other values (a signature) were
// logged whole. Every secret is hidden longest first now.
func TestLogHidesQueryHoldingCustomKey(t *testing.T) {
	const apiKey, sig = "AIzaSyA-0123456789abcdef", "sig-5ecret-0123456789"
	logs, errs := loggedWithKey(t, "https://maps.example/v1/geocode?key="+apiKey+"&signature="+sig, nil,
		func(r *http.Request) string { return r.URL.Query().Get("key") },
		func(r *http.Request) string { return "GET " + r.URL.String() })
	shows(t, logs, errs, sig, "the query's signature")
	shows(t, logs, errs, apiKey, "the key")
}

// The custom key was hidden before the path: a key that is a segment of
// the path (a tenant), hidden, left the rest of the path shown, where the
// error is shown without the path when Transport.Key is set.
func TestLogHidesPathHoldingCustomKey(t *testing.T) {
	const tenant, doc = "tenant-0123456789", "medical-record-77aa55"
	logs, errs := loggedWithKey(t, "https://api.example/"+tenant+"/records/"+doc, nil,
		func(r *http.Request) string { return strings.Split(r.URL.Path, "/")[1] },
		func(r *http.Request) string { return "GET " + r.URL.String() })
	shows(t, logs, errs, doc, "the path's rest")
	shows(t, logs, errs, tenant, "the key")
}

// The custom key was hidden before the credential fields: a key that is
// part of a credential's value (an account id that prefixes its token),
// hidden, left the credential no longer matching itself, and the rest of
// the token was logged whole.
func TestLogHidesTokenHoldingCustomKey(t *testing.T) {
	const account, rest = "acct-0123456789", "s3cr3t-signature-abcdef"
	h := http.Header{"X-Account": {account}, "Authorization": {"Bearer " + account + "." + rest}}
	logs, errs := loggedWithKey(t, "https://api.example/v1/things", h,
		func(r *http.Request) string { return r.Header.Get("X-Account") },
		func(r *http.Request) string { return "Authorization: " + r.Header.Get("Authorization") })
	shows(t, logs, errs, rest, "the token's rest")
}

// The custom key was hidden as it is and Go-quoted, not percent-escaped:
// a Base that quotes a URL carrying the key (an account token it moved
// into the query of the upstream it calls) had it logged, escaped.
func TestLogHidesCustomKeyEscaped(t *testing.T) {
	const account = "Zm9vYmFy/c2VjcmV0+a2V5=="
	h := http.Header{"X-Account": {account}}
	logs, errs := loggedWithKey(t, "https://api.example/v1/things", h,
		func(r *http.Request) string { return r.Header.Get("X-Account") },
		func(r *http.Request) string {
			return "GET " + "https://upstream.example/v1/things?account=" + url.QueryEscape(r.Header.Get("X-Account"))
		})
	escaped := url.QueryEscape(account)
	shows(t, logs, errs, escaped, "the custom key escaped")
}

// A credential field's value was hidden as the caller wrote it, spaces
// and all: a value without a scheme (an API key) set with a space around
// it was logged trimmed, as net/http sends it (Header.Write trims each
// value) and a Base that quotes what it sent quotes it.
func TestLogHidesCredentialTrimmed(t *testing.T) {
	for _, field := range []string{"X-Api-Key", "Private-Token", "X-Shopify-Access-Token"} {
		const secret = "sk_live_0123456789abcdef"
		logs := loggedWithHeader(t, http.Header{field: {" " + secret + " "}}, field+": "+secret)
		if !strings.Contains(logs, "EOF") || strings.Contains(logs, secret) {
			t.Errorf("%s: the log shows the credential %q, set with a space around it:\n%s", field, secret, logs)
		}
	}
}

// A Base that relays the request through an upstream (a scraping proxy, a
// gateway) quotes the request's URL escaped whole as a query value, as its
// inner http.Client's *url.Error writes the upstream URL: the query and
// the password were hidden only as the URL writes them, and decoded, and
// the escaped form showed them (as it no longer did a custom key's:
// TestLogHidesCustomKeyEscaped).
func TestLogHidesURLEscapedWhole(t *testing.T) {
	const token = "s3cr3tTOKEN42"
	const password = "pw/s3cr3t+99" // escaped in the URL, and again in the relay's
	var logs bytes.Buffer
	var errs []error
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{RetryTransient: true, MaxAttempts: 2,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			OnEvent: func(e polite.Event) {
				if e.Err != nil {
					errs = append(errs, e.Err)
				}
			},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				up := "https://relay.example/fetch?url=" + url.QueryEscape(r.URL.String())
				return nil, fmt.Errorf("relay: Get %q: %w", up, io.ErrUnexpectedEOF) // as an inner *url.Error writes it
			})}
		req, _ := http.NewRequest(http.MethodGet, "https://user:"+url.PathEscape(password)+"@api.example/v1/things?a=1&token="+token, nil)
		if _, err := tr.RoundTrip(req); err == nil {
			t.Fatal("no error")
		}
	})
	if len(errs) == 0 {
		t.Fatal("no event carried Base's error")
	}
	for _, secret := range []string{token, password, url.QueryEscape(password), url.PathEscape(password)} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log shows %q:\n%s", secret, logs.String())
		}
		for _, err := range errs {
			if s := fmt.Sprint(err); strings.Contains(s, secret) {
				t.Errorf("an event's Err shows %q: %s", secret, s)
			}
		}
	}
}
