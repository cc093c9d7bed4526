package ratelimittest_test

import (
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// An answer to HEAD has no body: over the network net/http's client hands
// it back with http.NoBody, which reads EOF at once, whatever the Handler
// goes on doing, and so does Transport, from a Config.Stream Handler too.
// Its body read until the Handler's stream was done (an hour here): a
// caller draining the body before Close, as callers do for connection
// reuse, hung for the whole stream.
func TestHeadOfStreamHasNoBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{Stream: time.Hour})
		readsNoBodyAtOnce(t, h, http.MethodHead, "a HEAD")
	})
}

// readsNoBodyAtOnce sends a method request to h through a Transport, in a
// synctest bubble, and fails unless its body reads empty and EOF at once,
// as a response with no body does over the network; what names it.
func readsNoBodyAtOnce(t *testing.T, h http.Handler, method, what string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, "http://api.test/", nil)
	resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	b, err := io.ReadAll(resp.Body)
	if d := time.Since(start); d != 0 || len(b) != 0 || err != nil {
		t.Errorf("reading the body of %s (ContentLength %d): %q, %v after %v; want empty, <nil> at once, as over the network",
			what, resp.ContentLength, b, err, d)
	}
}
