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

// logError hid the password everywhere in the text first, then the user
// name before a masked password: a dummy password that also occurs in the
// user name (a token with an "x" in it, and the dummy password "x") was
// replaced inside the name first, so that "name:" was no longer there and
// the token was logged, one character aside.
func TestLogErrorHidesUserWhenPasswordInsideIt(t *testing.T) {
	for _, form := range []string{"redacted", "stripped"} {
		t.Run(form, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs bytes.Buffer
				tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
					Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
					Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
						u := r.URL.Redacted() // https://ghp_...:xxxxx@api.test/x
						if form == "stripped" {
							u = strings.Replace(u, "xxxxx", "***", 1) // as http.Client's url.Error writes it
						}
						return nil, fmt.Errorf("%s %s giving up: %w", r.Method, u, io.ErrUnexpectedEOF)
					})}
				req, err := http.NewRequest(http.MethodGet, "https://ghp_T0kenPARTxONE:x@api.test/x", nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tr.RoundTrip(req); err == nil {
					t.Fatal("no error")
				}
				s := logs.String()
				if !strings.Contains(s, "EOF") {
					t.Fatalf("no log of the error: %s", s)
				}
				if strings.Contains(s, "ghp_T0kenPART") || strings.Contains(s, "ONE:") {
					t.Errorf("log shows the URL's user name (a credential):\n%s", s)
				}
			})
		})
	}
}

// The user name before a masked password was hidden wherever "name:"
// occurred in the text: a user name that is also the host's (a service
// "svc" reached as http://svc:s3cret@svc:8080, as in docker-compose) was
// cut out of the error's host, "lookup svc: no such host" logged as
// "lookup ...: no such host". Only a name before a masked password and
// "@" is hidden now.
func TestLogErrorKeepsHostNamedAsUser(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("dial tcp: lookup svc: no such host: %w", io.ErrUnexpectedEOF)
			})}
		req, err := http.NewRequest(http.MethodGet, "http://svc:s3cret@svc:8080/items", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.RoundTrip(req); err == nil {
			t.Fatal("no error")
		}
		s := logs.String()
		if !strings.Contains(s, "no such host") {
			t.Fatalf("no log of the error: %s", s)
		}
		if !strings.Contains(s, "lookup svc: no such host") {
			t.Errorf("the host's name was cut from the error text (it is the user name, but no password follows it here):\n%s", s)
		}
	})
}
