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

// A query's API key written as a parameter ended by ';' (which many
// servers and gateways split on, as Go did before 1.17), or as a bare
// parameter with no '=' ("?v=2&sk-live-…"), is hidden where a Base that
// rejects it quotes it alone, as "?api_key=…" joined by '&' is.
func TestLogHidesQueryValueForms(t *testing.T) {
	const secret = "sk-live-4f9a1c2e7b"
	for _, q := range []string{"v=2;api_key=" + secret, "v=2&" + secret} {
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
					// The last parameter, as a Base that splits on '&'
					// and ';' reads it, quoted alone.
					ps := strings.FieldsFunc(r.URL.RawQuery, func(c rune) bool { return c == '&' || c == ';' })
					_, v, ok := strings.Cut(ps[len(ps)-1], "=")
					if !ok {
						v = ps[len(ps)-1]
					}
					return nil, fmt.Errorf("key %s refused: %w", v, io.ErrUnexpectedEOF)
				})}
			req, _ := http.NewRequest(http.MethodGet, "https://api.example/v1/search?"+q, nil)
			if _, err := tr.RoundTrip(req); err == nil {
				t.Fatal("no error")
			}
		})
		if !strings.Contains(logs.String(), "EOF") {
			t.Fatalf("query %q: no error logged:\n%s", q, logs.String())
		}
		if strings.Contains(logs.String(), secret) || strings.Contains(event, secret) {
			t.Errorf("query %q: the log or Event.Err shows the query's API key:\nlog: %s\nevent: %s", q, logs.String(), event)
		}
	}
}
