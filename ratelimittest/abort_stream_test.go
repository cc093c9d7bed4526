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

// A Handler that flushes part of a stream and then aborts: over a
// connection, net/http's server has sent what was flushed, and closes the
// connection on the panic, so the client reads the flushed bytes and then
// io.ErrUnexpectedEOF ("the streamed body ends with io.ErrUnexpectedEOF",
// Transport's doc). Through the Transport, finish called pipe.abort, which
// threw away whatever the client had not read yet: the client read
// nothing at all when the Handler panicked before it read.
func TestAbortAfterFlushKeepsFlushedBody(t *testing.T) {
	const flushed = "data: 1\n\n"
	handler := func(release chan struct{}) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, flushed)
			w.(http.Flusher).Flush()
			<-release
			panic(http.ErrAbortHandler)
		}
	}

	t.Run("loopback", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(handler(release))
		defer srv.Close()
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		close(release)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != flushed || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("over loopback: read %q, %v; want %q, %v", body, err, flushed, io.ErrUnexpectedEOF)
		}
	})

	t.Run("Transport", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.example/events", nil)
			resp, err := (&ratelimittest.Transport{Handler: handler(release)}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			close(release)
			synctest.Wait() // the Handler has panicked and returned
			body, err := io.ReadAll(resp.Body)
			if string(body) != flushed || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("through Transport: read %q, %v; want %q then %v, as over loopback", body, err, flushed, io.ErrUnexpectedEOF)
			}
		})
	})
}

// The Handler's goroutine set responseWriter.aborted in its recover,
// after Flush had closed w.sent; RoundTrip read w.aborted after <-w.sent
// with nothing ordering the two: a data race (run with -race), and a
// response whose header was flushed was sometimes an error instead.
func TestAbortAfterFlushRace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "data: 1\n\n")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		})
		for range 20 {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.example/events", nil)
			resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip of a response whose header was flushed: %v; want the response, its body cut short", err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
