package polite_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite"
)

// Only six fields were hidden (Authorization, Proxy-Authorization,
// Cookie, X-Api-Key, Api-Key, X-Auth-Token): a vendor's credential field,
// quoted by Base's error, was logged whole.
func TestLogHidesVendorCredentialFields(t *testing.T) {
	for _, tc := range []struct{ field, secret string }{
		{"X-Shopify-Access-Token", "shpat_0123456789abcdef0123"},
		{"Private-Token", "glpat-0123456789abcdefXYZ"},
		{"X-Goog-Api-Key", "AIzaSyA-0123456789abcdefghij"},
		{"X-Amz-Security-Token", "IQoJb3JpZ2luX2VjEJr"},
	} {
		logs := loggedWithHeader(t, http.Header{tc.field: {tc.secret}}, tc.field+": "+tc.secret)
		if !strings.Contains(logs, "EOF") || strings.Contains(logs, tc.secret) {
			t.Errorf("%s: the log shows the credential %q:\n%s", tc.field, tc.secret, logs)
		}
	}
}

// A custom Key built from a credential field the log did not know was
// logged whole when Base's error quoted the field, though the record's
// key showed only its fingerprint.
func TestLogHidesCustomKeyInBaseError(t *testing.T) {
	const secret = "acct-0123456789"
	var logs bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
			Key:    func(r *http.Request) string { return r.Header.Get("X-Account") },
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("sending X-Account: %s: %w", r.Header.Get("X-Account"), io.ErrUnexpectedEOF)
			})}
		req, _ := http.NewRequest(http.MethodGet, "https://shop.example/products.json", nil)
		req.Header.Set("X-Account", secret)
		if _, err := tr.RoundTrip(req); err == nil {
			t.Fatal("no error")
		}
	})
	if !strings.Contains(logs.String(), "EOF") || strings.Contains(logs.String(), secret) {
		t.Errorf("the log shows the custom key %q:\n%s", secret, logs.String())
	}
}

// The event handed to OnEvent carried Base's error as it was, token and
// all, where the log record hid it; then fmt still printed it under a
// verb no string takes (%d, %t), which printed the error's fields.
func TestEventErrHidesCredentials(t *testing.T) {
	const secret = "sk-live-0123456789"
	var errs []error
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{RetryTransient: true, MaxAttempts: 2,
			OnEvent: func(e polite.Event) {
				if e.Err != nil {
					errs = append(errs, e.Err)
				}
			},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("sending Authorization: %s: %w", r.Header.Get("Authorization"), io.ErrUnexpectedEOF)
			})}
		req, _ := http.NewRequest(http.MethodGet, "https://api.example/v1/things", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		if _, err := tr.RoundTrip(req); err == nil {
			t.Fatal("no error")
		}
	})
	if len(errs) != 2 { // the retry and the give-up
		t.Fatalf("%d events carried the error, want 2", len(errs))
	}
	for _, err := range errs {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("an event's Err shows the token: %s", err)
		}
		for _, verb := range everyVerb {
			if s := fmt.Sprintf(verb, err); strings.Contains(s, secret) || strings.Contains(s, fmt.Sprintf("%x", secret)) {
				t.Errorf("fmt %s of an event's Err shows the token: %s", verb, s)
			}
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "EOF") {
			t.Errorf("an event's Err is %v; want Base's error found by errors.Is", err)
		}
	}
}
