package ratelimittest_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite/ratelimittest"
)

// A streamed body closed by the client stays closed: every later Read
// fails as net/http's does, with "http: read on closed response body"
// (errReadAfterClose, whose comment says so).
//
// When Handler (deaf to its context) returned after the client's context
// had ended, the end of the request aborted the body with the context's
// error, which replaced the closed body's: a Read after Close returned
// context.Canceled or the closed body's error by the order of Close, the
// cancel and the handler's end.
func TestReadAfterCloseStaysClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		done := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(done)
			http.NewResponseController(w).Flush()
			<-release // deaf to its context
		})
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/", nil)
		resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		resp.Body.Close()
		_, closedErr := resp.Body.Read(make([]byte, 1))
		if closedErr == nil || closedErr.Error() != "http: read on closed response body" {
			t.Fatalf("Read just after Close: %v, want http: read on closed response body (the premise)", closedErr)
		}
		cancel() // the caller's deferred cancel, after it closed the body
		close(release)
		<-done
		synctest.Wait()
		if _, err := resp.Body.Read(make([]byte, 1)); err == nil || err.Error() != closedErr.Error() {
			t.Errorf("Read after Close, once the context ended and Handler returned: %v, want %v (the body was closed first)", err, closedErr)
		}
	})
}
