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

// A Base whose error quoted a request's credential field (a client that
// dumps the request it failed to send) had it logged whole, though
// SECURITY.md says an Authorization value never appears in a log record.
// The value, and the token after its scheme, are hidden.
func TestLogErrorHidesCredentialFields(t *testing.T) {
	for _, tc := range []struct{ field, value, quoted string }{
		{"Authorization", "Bearer sk-live-0123456789", "Authorization: Bearer sk-live-0123456789"},
		{"Authorization", "Bearer sk-live-0123456789", "token sk-live-0123456789 rejected"},
		{"Proxy-Authorization", "Basic dXNlcjpwYXNzd29yZA==", "Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA=="},
		{"X-Api-Key", "k3y-abcdef-123", "x-api-key=k3y-abcdef-123"},
		{"Cookie", "session=s3cr3t-cookie", "Cookie: session=s3cr3t-cookie"},
	} {
		var logs bytes.Buffer
		synctest.Test(t, func(t *testing.T) {
			tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					return nil, fmt.Errorf("sending %s: %w", tc.quoted, io.ErrUnexpectedEOF)
				})}
			req, _ := http.NewRequest(http.MethodGet, "https://api.example/v1/things", nil)
			req.Header.Set(tc.field, tc.value)
			if _, err := tr.RoundTrip(req); err == nil {
				t.Fatal("no error")
			}
		})
		secret := tc.value[strings.LastIndexByte(tc.value, ' ')+1:]
		if !strings.Contains(logs.String(), "EOF") || strings.Contains(logs.String(), secret) {
			t.Errorf("%s: %s: the log shows %q, or no error:\n%s", tc.field, tc.quoted, secret, logs.String())
		}
	}
}
