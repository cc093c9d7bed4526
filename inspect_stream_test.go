package polite_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A streamed response (its body still arriving) was counted by the server
// in the r it answered, and the Transport sends the next request at once
// (DESIGN.md §4); Inspect's Remaining counted it again: 0 left until the
// reset, where 1 is.
func TestInspectRemainingAfterStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		pr, pw := io.Pipe()
		defer pw.Close()
		tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("RateLimit-Policy", `"api";q=100;w=60`)
			h.Set("RateLimit", `"api";r=1;t=60`)
			var body io.ReadCloser = io.NopCloser(strings.NewReader("ok"))
			cl := int64(2)
			if n.Add(1) == 1 {
				body, cl = pr, -1 // streamed: its body is still arriving
			}
			return &http.Response{StatusCode: 200, Header: h, Body: body, ContentLength: cl, Request: r}, nil
		})}
		c := &http.Client{Transport: tr}
		resp, err := c.Get("https://api.example/stream")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		st, _ := tr.Inspect("https://api.example", time.Now())
		var rem int64 = -2
		var reset time.Time
		if len(st.Policies) > 0 {
			rem, reset = st.Policies[0].Remaining, st.Policies[0].ResetAt
		}
		// What the Transport does: a second request goes at once.
		start := time.Now()
		resp2, err := c.Get("https://api.example/next")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp2.Body)
		resp2.Body.Close()
		waited := time.Since(start)
		if rem != 1 {
			t.Errorf("Inspect after a streamed answer of r=1: Remaining = %d (ResetAt in %v), want 1: the server counted the stream in r; the next request went after %v", rem, reset.Sub(start), waited)
		}
	})
}
