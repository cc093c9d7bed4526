package ratelimittest_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/politehttp/polite/ratelimittest"
)

// The body of a flushed 304 with the Content-Length of its representation
// reads empty, as over the network: for a while reading it failed with
// io.ErrUnexpectedEOF, taken for a body cut short of that length.
func TestTransportFlushed304BodyReads(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Length", "1234") // the representation's
		w.WriteHeader(http.StatusNotModified)
		http.NewResponseController(w).Flush()
	})
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, err := io.ReadAll(resp.Body); err != nil || len(b) != 0 {
		t.Errorf("body of a flushed 304: %q, %v; want empty, <nil> (as over the network)", b, err)
	}
}
