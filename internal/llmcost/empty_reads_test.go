package llmcost

import (
	"strings"
	"testing"
)

// emptyReader returns no byte and no error from every Read, as a body
// closed at its context's end did.
type emptyReader struct{ reads int }

func (r *emptyReader) Read([]byte) (int, error) { r.reads++; return 0, nil }

// A reader that returned (0, nil) for ever was read for ever: Read never
// returned, and neither did the Transport's RoundTrip estimating a body.
func TestReadStopsOnEmptyReads(t *testing.T) {
	r := &emptyReader{}
	if e, ok := Read(r, "/v1/chat/completions", 0); ok {
		t.Errorf("Read of a reader making no progress = %+v, true; want false", e)
	}
	if r.reads > MaxEmptyReads {
		t.Errorf("%d reads, want at most %d", r.reads, MaxEmptyReads)
	}
	// A few empty reads among others are no failure.
	e, ok := Read(&gappy{r: strings.NewReader(`{"model":"gpt-4o","messages":[{"role":"user","content":"hello"}],"max_tokens":10}`)}, "/v1/chat/completions", 0)
	if !ok || e.Max != 10 {
		t.Errorf("Read with an empty read between each byte = %+v, %v; want max 10, true", e, ok)
	}
}

// gappy returns one byte of r, then nothing, in turn.
type gappy struct {
	r   *strings.Reader
	gap bool
}

func (g *gappy) Read(p []byte) (int, error) {
	if g.gap = !g.gap; g.gap || len(p) == 0 {
		return 0, nil
	}
	return g.r.Read(p[:1])
}
