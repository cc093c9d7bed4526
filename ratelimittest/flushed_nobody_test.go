package ratelimittest_test

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
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
				readsNoBodyAtOnce(t, h, http.MethodGet, fmt.Sprintf("a flushed %d", code))
			})
		})
	}
}
