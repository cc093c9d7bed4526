package polite_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A method of a megabyte (a reverse proxy passes on a client's request
// line, whose method net/http reads as a token of any length) is cut in a
// log record as a path is: each record of the request carried it whole.
func TestLogMethodBounded(t *testing.T) {
	var logs bytes.Buffer
	tr := &polite.Transport{
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Base: &ratelimittest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("RateLimit-Policy", `"default";q=100;w=60`)
			w.Header().Set("RateLimit", `"default";r=99;t=60`)
		})},
	}
	method := strings.Repeat("X", 1<<20)
	req, err := http.NewRequest(method, "http://api.test/"+strings.Repeat("p", 1<<20), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if logs.Len() == 0 {
		t.Fatal("no log record")
	}
	for line := range strings.Lines(strings.TrimSpace(logs.String())) {
		if len(line) > 4<<10 {
			t.Errorf("a log record of %d bytes: %.160s...", len(line), line)
		}
	}
}
