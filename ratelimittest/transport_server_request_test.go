package ratelimittest_test

import (
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite/ratelimittest"
)

// unsized is a request body whose length the client does not know (an
// upload streamed from a pipe or a generator): http.NewRequest leaves
// ContentLength 0 for it, which for a client request means "unknown".
type unsized struct{ io.Reader }

// Transport's doc: Handler serves "a copy of the request shaped like one a
// server receives". A server receives a body of unknown length as
// ContentLength -1 (chunked); for an incoming request, 0 means no body.
// The Transport handed Handler the client's ContentLength 0 with the
// body, so a Handler that trusts it lost the body: httputil.ReverseProxy
// (the Handler here, in front of an echo) drops the body of a request
// whose ContentLength is 0, and the echo got nothing.
func TestTransportServerRequestUnknownLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var length int64
		var te []string
		echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(w, r.Body)
		})
		front := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			length, te = r.ContentLength, r.TransferEncoding
			proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: "backend.test"})
			proxy.Transport = &ratelimittest.Transport{Handler: echo}
			proxy.ServeHTTP(w, r)
		})
		c := client(front)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/upload", unsized{strings.NewReader("hello")})
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if length != -1 {
			t.Errorf("Handler saw ContentLength %d, TransferEncoding %q; a server sees -1, [chunked]", length, te)
		}
		if string(body) != "hello" {
			t.Errorf("a ReverseProxy Handler passed on the body %q, want %q", body, "hello")
		}
	})
}
