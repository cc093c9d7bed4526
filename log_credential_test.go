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
		logs := loggedWithHeader(t, http.Header{tc.field: {tc.value}}, tc.quoted)
		secret := tc.value[strings.LastIndexByte(tc.value, ' ')+1:]
		if !strings.Contains(logs, "EOF") || strings.Contains(logs, secret) {
			t.Errorf("%s: %s: the log shows %q, or no error:\n%s", tc.field, tc.quoted, secret, logs)
		}
	}
}

// loggedWithHeader returns what the log shows of a Base error quoting quoted,
// for a request with header h.
func loggedWithHeader(t *testing.T, h http.Header, quoted string) string {
	var logs bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("sending %s: %w", quoted, io.ErrUnexpectedEOF)
			})}
		req, _ := http.NewRequest(http.MethodGet, "https://api.example/v1/things", nil)
		for k, v := range h {
			req.Header[k] = v
		}
		if _, err := tr.RoundTrip(req); err == nil {
			t.Fatal("no error")
		}
	})
	return logs.String()
}

// Credential fields were looked up by their canonical name only: a
// hand-built header holding "authorization" (net/http sends it as it is)
// had its token logged whole.
func TestLogHidesCredentialFieldAnySpelling(t *testing.T) {
	const secret = "sk-live-0123456789"
	logs := loggedWithHeader(t, http.Header{"authorization": {"Bearer " + secret}}, "Authorization: Bearer "+secret)
	if !strings.Contains(logs, "EOF") || strings.Contains(logs, secret) {
		t.Errorf("the log shows %q, sent under the field name \"authorization\":\n%s", secret, logs)
	}
}

// A Cookie holds several cookies; the "token after its scheme" was cut at
// the first space, which for a Cookie is the second cookie, so the first
// cookie's pair, quoted alone, was logged whole.
func TestLogHidesOneCookieOfSeveral(t *testing.T) {
	const secret = "session=s3cr3t-cookie-value"
	logs := loggedWithHeader(t, http.Header{"Cookie": {secret + "; theme=dark"}}, "cookie "+secret+" rejected")
	if !strings.Contains(logs, "EOF") || strings.Contains(logs, "s3cr3t-cookie-value") {
		t.Errorf("the log shows the session cookie:\n%s", logs)
	}
}

// A Basic credential was hidden as base64 only: a Base that quoted the
// credentials it decoded (user:password) had the password logged.
func TestLogHidesDecodedBasicCredentials(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "https://api.example/", nil)
	req.SetBasicAuth("crawler", "hunter2-secret")
	logs := loggedWithHeader(t, req.Header, `proxy refused credentials "crawler:hunter2-secret"`)
	if !strings.Contains(logs, "EOF") || strings.Contains(logs, "hunter2-secret") {
		t.Errorf("the log shows the Basic password, decoded:\n%s", logs)
	}
}

// A scheme ended by a tab ("Bearer\t<token>", which servers read as a
// space) hid the value whole only: the token quoted alone was logged.
func TestLogHidesTokenAfterTab(t *testing.T) {
	const secret = "sk-live-tab-0123456789"
	logs := loggedWithHeader(t, http.Header{"Authorization": {"Bearer\t" + secret}}, "token "+secret+" rejected")
	if !strings.Contains(logs, "EOF") || strings.Contains(logs, secret) {
		t.Errorf("the log shows the token after \"Bearer\\t\":\n%s", logs)
	}
}

// A URL's fragment is never sent, but url.URL.String and Redacted write
// it, and a Base's error quoting the URL had it logged: OAuth's implicit
// flow puts a token there.
func TestLogHidesFragment(t *testing.T) {
	const secret = "tok-frag-0123456789"
	var logs bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("GET %s (%s): %w", r.URL, r.URL.Redacted(), io.ErrUnexpectedEOF)
			})}
		req, _ := http.NewRequest(http.MethodGet, "https://api.example/cb#access_token="+secret+"&state=a%20b", nil)
		if _, err := tr.RoundTrip(req); err == nil {
			t.Fatal("no error")
		}
	})
	if !strings.Contains(logs.String(), "EOF") || strings.Contains(logs.String(), secret) || !strings.Contains(logs.String(), "api.example/cb") {
		t.Errorf("the log shows the fragment's token, or not the URL's path:\n%s", logs.String())
	}
}

// A short fragment, a page's anchor a crawler kept, is not hidden: "#1"
// masked every "1" of the error's text, its address among them.
func TestLogKeepsShortFragment(t *testing.T) {
	var logs bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("dial tcp 10.1.1.1:443 for %s: %w", r.URL, io.ErrUnexpectedEOF)
			})}
		req, _ := http.NewRequest(http.MethodGet, "https://api.example/page#1", nil)
		if _, err := tr.RoundTrip(req); err == nil {
			t.Fatal("no error")
		}
	})
	if !strings.Contains(logs.String(), "10.1.1.1:443") {
		t.Errorf("the log masks the error's address for a fragment of one byte:\n%s", logs.String())
	}
}
