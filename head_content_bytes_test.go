package polite_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A response to HEAD carries no content: its Content-Length is the size of
// the body a GET would have had (RFC 9110 §8.6, §9.3.2), and net/http's
// Transport reports it as Response.ContentLength all the same. A server
// that counts content bytes counted none for it. The Transport took it for
// content received: one HEAD of a 50 MB file made the next GETs of 1000
// bytes each cost 50 MB against a content-bytes quota of 100 kB per 10 s,
// and 5 of them took minutes while the server said 99% of the quota was
// left.
func TestHeadContentLengthIsNoContentBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		used := 0
		tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			const size = 1000
			h := http.Header{}
			h.Set("RateLimit-Policy", `"bw";q=100000;w=10;qu="content-bytes"`)
			resp := &http.Response{StatusCode: http.StatusOK, Header: h, Request: r}
			if r.Method == http.MethodHead {
				// As http.Transport answers a HEAD: the length of
				// the representation, no body.
				resp.ContentLength, resp.Body = 50_000_000, http.NoBody
			} else {
				used += size
				resp.ContentLength, resp.Body = size, io.NopCloser(strings.NewReader(strings.Repeat("x", size)))
			}
			h.Set("RateLimit", fmt.Sprintf(`"bw";r=%d;t=10`, 100000-used))
			return resp, nil
		})}
		do := func(method string) {
			req, _ := http.NewRequestWithContext(t.Context(), method, "http://api.test/file", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		do(http.MethodHead)
		for range 5 {
			do(http.MethodGet)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("a HEAD and 5 GETs of 1000 bytes, 5000 of a 100000-byte quota, took %v; want no wait", d)
		}
	})
}
