package ratelimittest_test

import (
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"testing"
)

// Transport's doc: "A response sent when Handler returns reads like one
// from the network". It set resp.ContentLength to the bytes Handler wrote
// and ignored the Content-Length Handler declared:
//
//   - a HEAD answered the usual way (Content-Length of the GET body, no
//     body written) read ContentLength 0 while its header said 42; over
//     the network it is 42;
//   - a HEAD with no Content-Length got an invented "Content-Length: 0"
//     (over the network: none, ContentLength -1);
//   - a body shorter than its Content-Length (a truncated response) read
//     as complete, with io.EOF; over the network the client reads what
//     was sent and then io.ErrUnexpectedEOF;
//   - a body longer than its Content-Length was passed on whole, and the
//     Handler's Write did not fail with http.ErrContentLength.
func TestTransportDeclaredContentLength(t *testing.T) {
	cases := []struct {
		name, method string
		h            http.HandlerFunc
	}{
		{"HEAD with Content-Length", http.MethodHead, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "42")
		}},
		{"HEAD without body or Content-Length", http.MethodHead, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
		}},
		{"body shorter than Content-Length", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "12345")
		}},
		{"flushed body shorter than Content-Length", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10")
			w.(http.Flusher).Flush()
			io.WriteString(w, "12345")
		}},
		{"body longer than Content-Length", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "3")
			io.WriteString(w, "12")
			if _, err := io.WriteString(w, "345"); !errors.Is(err, http.ErrContentLength) {
				io.WriteString(w, "|write past Content-Length did not fail|")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, want := bothWays(t, c.method, c.h)
			if cl := resp.Header.Get("Content-Length"); cl != "" && cl != strconv.FormatInt(resp.ContentLength, 10) {
				t.Errorf("through Transport: Content-Length %q but ContentLength %d", cl, resp.ContentLength)
			}
			if got := shape(t, resp); !reflect.DeepEqual(got, want) {
				t.Errorf("through Transport:\n%s\nover the network:\n%s", got, want)
			}
		})
	}
}
