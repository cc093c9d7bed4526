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
