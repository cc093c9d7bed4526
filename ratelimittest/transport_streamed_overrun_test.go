package ratelimittest_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/politehttp/polite/ratelimittest"
)

// Transport's doc: "A body shorter than the Content-Length Handler set ends
// with io.ErrUnexpectedEOF ... and a Write past it fails with
// http.ErrContentLength". A Write past the length writes none of its bytes,
// so a Handler that declares 5 and writes "123" then "456" has sent 3
// bytes of 5: over the network the client reads "123" and then
// io.ErrUnexpectedEOF (the server closes the connection).
//
// The whole response got it right (it compares the bytes buffered), but
// a flushed one did not: finish compared the declared length with
// w.written, which counts the refused bytes too (as net/http's does, for
// ErrContentLength alone), found 6 >= 5, and ended the body with io.EOF.
// The client read a short body as whole.
func TestTransportStreamedWritePastContentLengthEndsShort(t *testing.T) {
	cases := []struct {
		name string
		h    http.HandlerFunc
	}{
		{"flush, then write past", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5")
			w.(http.Flusher).Flush()
			io.WriteString(w, "123")
			if _, err := io.WriteString(w, "456"); !errors.Is(err, http.ErrContentLength) {
				panic("Write past Content-Length: " + errString(err))
			}
		}},
		{"flush, then one write past", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5")
			w.(http.Flusher).Flush()
			io.WriteString(w, "123456")
		}},
		{"write, flush, write past", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "123")
			w.(http.Flusher).Flush()
			io.WriteString(w, "456")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.h)
			defer srv.Close()
			resp, err := srv.Client().Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			want := shape(t, resp)
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			resp, err = (&ratelimittest.Transport{Handler: c.h}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := shape(t, resp); got != want {
				t.Errorf("through Transport:\n%s\nover the network:\n%s", got, want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
