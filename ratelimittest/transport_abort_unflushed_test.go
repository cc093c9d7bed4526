package ratelimittest_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite/ratelimittest"
)

// Transport's doc: a panic of Handler after the header was flushed ends
// the streamed body "with io.ErrUnexpectedEOF after what was flushed", as
// net/http's server ends the connection. The Transport passed on what
// Handler wrote after its last flush too: a client read a second, whole
// event that never leaves a real server, whose buffered bytes are dropped
// with the connection (the loopback subtest shows it).
func TestTransportAbortKeepsOnlyFlushed(t *testing.T) {
	const flushed, unflushed = "data: 1\n\n", "data: 2\n\n"
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, flushed)
		w.(http.Flusher).Flush()
		io.WriteString(w, unflushed) // not flushed
		panic(http.ErrAbortHandler)
	})
	check := func(t *testing.T, via string, body []byte, err error) {
		t.Helper()
		if string(body) != flushed || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: read %q, %v; want %q (what was flushed), then %v", via, body, err, flushed, io.ErrUnexpectedEOF)
		}
	}

	t.Run("loopback", func(t *testing.T) {
		srv := httptest.NewServer(h)
		defer srv.Close()
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		check(t, "over loopback", body, err)
	})

	t.Run("Transport", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.example/events", nil)
			resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			check(t, "through Transport", body, err)
		})
	})
}
