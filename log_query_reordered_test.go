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

// A Base that adds a parameter to the query of its copy of the request
// (a timestamp, a signature) and quotes that URL in its error, as signing
// transports do: url.Values.Encode sorts the parameters, so the request's
// query as sent is no longer a substring of the error. The API key it
// holds is hidden as a value of its own; before, only the query whole
// was, and the key was logged, and shown in Event.Err.
func TestLogHidesQueryValuesReordered(t *testing.T) {
	const secret = "sk-live-4f9a1c2e7b"
	var logs bytes.Buffer
	var event string
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			OnEvent: func(e polite.Event) {
				if e.Err != nil {
					event += e.Err.Error()
				}
			},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				c := r.Clone(r.Context())
				q := c.URL.Query()
				q.Set("ts", "1700000000")
				c.URL.RawQuery = q.Encode()
				return nil, fmt.Errorf("sending %s: %w", c.URL, io.ErrUnexpectedEOF)
			})}
		req, _ := http.NewRequest(http.MethodGet, "https://api.example/v1/search?q=go&api_key="+secret, nil)
		if _, err := tr.RoundTrip(req); err == nil {
			t.Fatal("no error")
		}
	})
	if !strings.Contains(logs.String(), "EOF") {
		t.Fatalf("no error logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), secret) || strings.Contains(event, secret) {
		t.Errorf("the log or Event.Err shows the query's API key %q:\nlog: %s\nevent: %s", secret, logs.String(), event)
	}
}
