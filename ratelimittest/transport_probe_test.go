package ratelimittest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// stuckBody is a request body whose Read never yields: it reports that a
// Read began on started, then blocks until release is closed.
type stuckBody struct {
	started chan struct{}
	release chan struct{}
}

func (b *stuckBody) Read(p []byte) (int, error) {
	select {
	case b.started <- struct{}{}:
	default:
	}
	<-b.release
	return 0, io.EOF
}

func (b *stuckBody) Close() error { return nil }

// For a while the Transport probed a GET body of unknown length for a
// first byte with a plain io.ReadFull, before Handler ran, with no bound:
// net/http's client gives the probe 200 ms and then sends the body
// chunked, and its RoundTrip ends with the request's context. Through the
// Transport, a GET whose body did not yield (a pipe fed later, a slow
// upload) blocked RoundTrip for good, and cancelling its context did not
// end it. The Transport probes nothing now.
func TestTransportProbeHeedsContext(t *testing.T) {
	body := &stuckBody{started: make(chan struct{}, 1), release: make(chan struct{})}
	defer close(body.release)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", body)
	tr := &ratelimittest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	done := make(chan error, 1)
	go func() {
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-body.started:
	case <-done:
		return // the body was never read: nothing could hold RoundTrip
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Logf("RoundTrip after cancel: %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("RoundTrip of a GET whose body does not yield is still blocked 1s after its context was cancelled (stuck in the first-byte probe)")
	}
}

// A GET with a body of unknown length whose bytes come only once the
// response has begun (a full-duplex exchange: the Handler flushes its
// header, then reads) works over net/http, whose probe gives up after
// 200 ms and sends the body chunked. Through the Transport, the probe
// waited for a byte that only the response can bring, and RoundTrip never
// returned.
func TestTransportProbeDuplexBody(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	defer pr.Close()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		io.Copy(w, r.Body)
	})
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/", pr)
	tr := &ratelimittest.Transport{Handler: handler}
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := tr.RoundTrip(req)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("RoundTrip: %v", r.err)
		}
		go func() { pw.Write([]byte("ping")); pw.Close() }()
		b, err := io.ReadAll(r.resp.Body)
		r.resp.Body.Close()
		if string(b) != "ping" || err != nil {
			t.Errorf("echoed body %q, %v; want \"ping\"", b, err)
		}
	case <-time.After(time.Second):
		t.Fatal("RoundTrip of a GET whose body yields only after the response header is still blocked after 1s; net/http's client sends it after a 200 ms probe")
	}
}
