package polite_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/politehttp/polite"
)

// noProgress is a body whose every Read returns no byte and no error, as
// one closed at its context's end may.
type noProgress struct{}

func (noProgress) Read([]byte) (int, error) { return 0, nil }
func (noProgress) Close() error             { return nil }

// EstimateCost read such a body for ever, and RoundTrip with it: it
// returns the zero Cost now.
func TestEstimateCostOfBodyMakingNoProgress(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "http://llm.test/v1/chat/completions", strings.NewReader(`{"messages":[]}`))
	req.GetBody = func() (io.ReadCloser, error) { return noProgress{}, nil }
	if c := polite.EstimateCost(req); c != (polite.Cost{}) {
		t.Errorf("EstimateCost = %v, want the zero Cost", c)
	}
}

// stalled is a body whose Read returns no byte and no error, counted in
// reads, until it has been read limit times; then io.EOF.
type stalled struct {
	reads *int
	limit int
}

func (s stalled) Read([]byte) (int, error) {
	if *s.reads++; *s.reads >= s.limit {
		return 0, io.EOF
	}
	return 0, nil
}
func (stalled) Close() error { return nil }

// A compressed body is read by the decoders, which read one that makes no
// progress for ever (here 100,000 reads, until the body gave up), before
// the bound above saw a read: it ends after 100 now, as a plain one does.
func TestEstimateCostOfCompressedBodyMakingNoProgress(t *testing.T) {
	for _, coding := range []string{"gzip", "deflate"} {
		reads := 0
		req, _ := http.NewRequest(http.MethodPost, "http://llm.test/v1/chat/completions", strings.NewReader(`{"messages":[]}`))
		req.Header.Set("Content-Encoding", coding)
		req.GetBody = func() (io.ReadCloser, error) { return stalled{&reads, 100_000}, nil }
		if c := polite.EstimateCost(req); c != (polite.Cost{}) || reads > 200 {
			t.Errorf("%s: EstimateCost = %v after %d reads, want the zero Cost after at most 200", coding, c, reads)
		}
	}
}
