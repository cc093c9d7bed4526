package ratelimittest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/politehttp/polite/ratelimittest"
)

// seenBy returns a Handler that records in *seen the request body as it
// arrives: its ContentLength and TransferEncoding, its Content-Length
// header, the bytes read and how reading ended.
func seenBy(seen *string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		*seen = fmt.Sprintf("ContentLength %d, TransferEncoding %q, Content-Length %q, body %q, read error %v",
			r.ContentLength, r.TransferEncoding, r.Header["Content-Length"], b, err)
	}
}

// sent is what a Handler behind rt sees of req, or how the client failed.
func sent(rt http.RoundTripper, req *http.Request, seen *string) string {
	*seen = "Handler not called"
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return "client failed; Handler saw: " + *seen
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return *seen
}

// Through the Transport a Handler saw the ContentLength a server sees but
// not the Content-Length header every server receives with a body of
// known length, or with an empty POST or PUT: a Handler that checks
// r.Header.Get("Content-Length") (to answer 411 Length Required, as some
// APIs do, or to read a length it is told) got "" through the Transport.
func TestTransportRequestLengthHeader(t *testing.T) {
	cases := []struct {
		name string
		mk   func(url string) *http.Request
	}{
		{"POST of 5 bytes", func(url string) *http.Request {
			r, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("hello"))
			return r
		}},
		{"POST, http.NoBody", func(url string) *http.Request {
			r, _ := http.NewRequest(http.MethodPost, url, http.NoBody)
			return r
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var seen string
			srv := httptest.NewServer(seenBy(&seen))
			defer srv.Close()
			want := sent(srv.Client().Transport, c.mk(srv.URL), &seen)
			got := sent(&ratelimittest.Transport{Handler: seenBy(&seen)}, c.mk("http://api.test/"), &seen)
			if got != want {
				t.Errorf("through Transport:\n%s\nover the network:\n%s", got, want)
			}
		})
	}
}
