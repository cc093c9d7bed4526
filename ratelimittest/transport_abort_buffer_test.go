package ratelimittest_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/politehttp/polite/ratelimittest"
)

// The Transport held what Handler writes after a flush in a 4 KiB buffer,
// "as a server's connection buffers it", and dropped it when Handler
// panicked. But
// net/http's server has two buffers: the response's own, 2 KiB
// (bufferBeforeChunkingSize), which a panic drops, and the connection's,
// 4 KiB, which conn.close flushes (finalFlush) before closing. A write
// past the response's 2 KiB reaches the connection's buffer and is sent
// even when Handler then panics: over loopback the client reads the 3000
// bytes written, then io.ErrUnexpectedEOF. Through the Transport it read
// none of them; the buffer is the response's, 2 KiB, now.
func TestTransportAbortDropsOnlyResponseBuffer(t *testing.T) {
	event := bytes.Repeat([]byte("x"), 3000)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		w.Write(event) // not flushed, but past the response's buffer
		panic(http.ErrAbortHandler)
	})
	read := func(t *testing.T, resp *http.Response) (int, error) {
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return len(b), err
	}

	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	wantN, wantErr := read(t, resp)
	if !errors.Is(wantErr, io.ErrUnexpectedEOF) {
		t.Fatalf("over loopback: %d bytes, %v; want io.ErrUnexpectedEOF at the end (the premise)", wantN, wantErr)
	}

	req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	resp, err = (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := read(t, resp); n != wantN || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("through Transport: read %d bytes, then %v; over loopback %d bytes, then %v", n, err, wantN, wantErr)
	}
}
