package polite_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite"
)

// doc.go ("Observing") promises that a log record's error shows Base's
// text without the request's user information, should Base's error quote
// its URL. A Base quoting it as url.URL.Redacted writes it
// ("user:xxxxx@host"), or with "***" for the password, had the user name
// logged: it was removed only as part of "user:password@". A token sent as
// the user name with a dummy password (GitHub's "TOKEN:x-oauth-basic@"),
// which net/http sends as Basic credentials, was logged whole.
func TestLogErrorHidesUserBeforeMaskedPassword(t *testing.T) {
	for _, tc := range []struct{ name, form string }{
		{"Redacted", "redacted"},
		{"url.Error style", "stripped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs bytes.Buffer
				tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
					Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
					Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
						u := r.URL.Redacted() // https://ghp_...:xxxxx@api.test/x
						if tc.form == "stripped" {
							u = strings.Replace(u, "xxxxx", "***", 1) // as http.Client's url.Error writes it
						}
						return nil, fmt.Errorf("%s %s giving up: %w", r.Method, u, io.ErrUnexpectedEOF)
					})}
				req, err := http.NewRequest(http.MethodGet, "https://ghp_t0kenvalue:x-oauth-basic@api.test/x", nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tr.RoundTrip(req); err == nil {
					t.Fatal("no error")
				}
				s := logs.String()
				if !strings.Contains(s, "unexpected EOF") {
					t.Fatalf("no log of the error: %s", s)
				}
				if strings.Contains(s, "ghp_t0kenvalue") {
					t.Errorf("log shows the URL's user name (a credential):\n%s", s)
				}
			})
		})
	}
}
