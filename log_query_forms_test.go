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

// A query's value that Base's error quotes alone is hidden from the log
// and Event.Err, however the query joins its parameters: with '&', with
// ';' (which many servers and gateways split on, as Go did before 1.17),
// or both; and a bare parameter with no '=' that looks like a token
// ("?v=2&sk-live-…"). Split on '&' alone, the ';' forms and the bare
// token were shown; split on ';' alone, a value holding ';' whose parts
// are short was. A bare word ("&timeout") is not hidden: it blanked the
// word in "i/o timeout".
func TestLogHidesQueryValueForms(t *testing.T) {
	tests := []struct {
		query  string
		quoted string // what Base's error quotes
		shown  bool   // the quote is no credential, and stays
	}{
		{"v=2;api_key=sk-live-4f9a1c2e7b", "sk-live-4f9a1c2e7b", false},
		{"v=2&sk-live-4f9a1c2e7b", "sk-live-4f9a1c2e7b", false},
		{"token=Ab3x9;Qz7k2", "Ab3x9;Qz7k2", false},
		{"token=sk-live-4f9a1c2e7b;x9", "sk-live-4f9a1c2e7b;x9", false},
		{"format=json&timeout&reset", "i/o timeout", true},
	}
	for _, tt := range tests {
		logs, event := failLogged(t, "https://api.example/v1/search?"+tt.query, func(*http.Request) error {
			return fmt.Errorf("%s refused: %w", tt.quoted, io.ErrUnexpectedEOF)
		})
		if shown := strings.Contains(logs, tt.quoted); shown != tt.shown || strings.Contains(event, tt.quoted) != tt.shown {
			t.Errorf("query %q: %q shown %v, want %v:\nlog: %s\nevent: %s", tt.query, tt.quoted, shown, tt.shown, logs, event)
		}
	}
}

// failLogged sends a GET of url through a Transport of one attempt whose
// Base fails with fail's error, wrapping io.ErrUnexpectedEOF, and returns
// what its Logger logged and the errors its events carried.
func failLogged(t *testing.T, url string, fail func(*http.Request) error) (logs, event string) {
	t.Helper()
	var buf bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
			Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
			OnEvent: func(e polite.Event) {
				if e.Err != nil {
					event += e.Err.Error()
				}
			},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) { return nil, fail(r) })}
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if _, err := tr.RoundTrip(req); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("err = %v", err)
		}
	})
	if !strings.Contains(buf.String(), "EOF") {
		t.Fatalf("%s: no error logged:\n%s", url, buf.String())
	}
	return buf.String(), event
}
