package polite_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/politehttp/polite"
)

// A GetBody that seeks the request's own Body back to its start and
// returns it, not a new copy as net/http asks (which calls GetBody only
// after the body was sent, where this one serves): the default estimate
// read the body through it and closed it, and the first attempt sent it
// behind a stand-in that closed it twice more. Counted, Body was closed 3
// times; an *os.File was closed before its send, which then failed ("file
// already closed"). DESIGN.md §10 says such a Body is closed once.
func TestGetBodyReturningBodyItself(t *testing.T) {
	const body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":10}`
	t.Run("counting", func(t *testing.T) {
		sb := &sharedBody{r: bytes.NewReader([]byte(body))}
		if got := sendOwnBody(t, sb, len(body), sb.r); got != body || sb.closed.Load() != 1 {
			t.Errorf("sent %q; Body closed %d times, want 1", got, sb.closed.Load())
		}
	})
	t.Run("file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "req.json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if got := sendOwnBody(t, f, len(body), f); got != body {
			t.Errorf("sent %q", got)
		}
	})
}

// sendOwnBody sends a POST whose Body is body, of n bytes, and whose
// GetBody seeks s, body's reader, back to its start and returns body
// itself, through a Transport whose Base reads what it is sent, and
// returns that.
func sendOwnBody(t *testing.T, body io.ReadCloser, n int, s io.Seeker) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://llm.example/v1/chat/completions", nil)
	req.Body, req.ContentLength = body, int64(n)
	req.GetBody = func() (io.ReadCloser, error) {
		_, err := s.Seek(0, io.SeekStart)
		return body, err
	}
	var got string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		got = string(b)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	resp, err := (&polite.Transport{Base: base}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return got
}
