package ratelimittest_test

import (
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// A flushed 204 or 304 has no body: net/http's client hands such a
// response back with http.NoBody, which reads EOF at once, whatever the
// server goes on doing, and so does the Transport. Its body was the
// stream, and reading it blocked until Handler returned (an hour here): a
// caller that drained the body before Close, as callers do, waited.
func TestFlushedNoBodyStatusReadsAtOnce(t *testing.T) {
	for _, code := range []int{http.StatusNoContent, http.StatusNotModified} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(code)
					http.NewResponseController(w).Flush()
					select { // work after the answer, as a long poll's cleanup
					case <-time.After(time.Hour):
					case <-r.Context().Done():
					}
				})
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
				resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				start := time.Now()
				b, err := io.ReadAll(resp.Body)
				if d := time.Since(start); d != 0 || len(b) != 0 || err != nil {
					t.Errorf("reading the body of a flushed %d (ContentLength %d): %q, %v after %v; want empty, <nil> at once, as over the network",
						code, resp.ContentLength, b, err, d)
				}
			})
		})
	}
}
