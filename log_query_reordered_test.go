package polite_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A Base that adds a parameter to the query of its copy of the request
// (a timestamp, a signature) and quotes that URL in its error, as signing
// transports do: url.Values.Encode sorts the parameters, so the request's
// query as sent is no longer a substring of the error. The API key it
// holds is hidden as a value of its own; before, only the query whole
// was, and the key was logged, and shown in Event.Err.
func TestLogHidesQueryValuesReordered(t *testing.T) {
	const secret = "sk-live-4f9a1c2e7b"
	logs, event := failLogged(t, "https://api.example/v1/search?q=go&api_key="+secret, func(r *http.Request) error {
		c := r.Clone(r.Context())
		q := c.URL.Query()
		q.Set("ts", "1700000000")
		c.URL.RawQuery = q.Encode()
		return fmt.Errorf("sending %s: %w", c.URL, io.ErrUnexpectedEOF)
	})
	if strings.Contains(logs, secret) || strings.Contains(event, secret) {
		t.Errorf("the log or Event.Err shows the query's API key %q:\nlog: %s\nevent: %s", secret, logs, event)
	}
}
