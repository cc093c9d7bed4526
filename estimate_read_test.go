package polite_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// countingReader is a plain io.Reader (no WriterTo) that counts the bytes
// it hands out.
type countingReader struct {
	r *strings.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}
func (c countingReader) Close() error { return nil }

// EstimateCost reads at most the first 1 MiB of the body through GetBody:
// it read a byte more, to see whether more followed.
func TestEstimateCostReadsAtMostLimit(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 2<<20) + `"}]}`
	var read int64
	req, _ := http.NewRequest(http.MethodPost, "http://llm.test/v1/chat/completions", strings.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) {
		return countingReader{strings.NewReader(body), &read}, nil
	}
	c := polite.EstimateCost(req)
	if c.Tokens == 0 {
		t.Fatalf("no estimate")
	}
	if read > 1<<20 {
		t.Errorf("EstimateCost read %d bytes of the body through GetBody, more than the 1 MiB (%d) promised", read, 1<<20)
	}
}

// noClose is an *os.File whose Close does nothing, so that the test can
// see how far it was read. It keeps *os.File's WriteTo.
type noClose struct{ *os.File }

func (noClose) Close() error { return nil }

// The same for a body uploaded from a file: GetBody's *os.File is an
// io.WriterTo, which was handed the scanner and copied 32 KiB at a time
// past the bound.
func TestEstimateCostReadsAtMostLimitFromFile(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 2<<20) + `"}]}`
	f, err := os.CreateTemp(t.TempDir(), "body")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(body)
	req, _ := http.NewRequest(http.MethodPost, "http://llm.test/v1/chat/completions", strings.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) {
		f.Seek(0, io.SeekStart)
		return noClose{f}, nil
	}
	if c := polite.EstimateCost(req); c.Tokens == 0 {
		t.Fatalf("no estimate")
	}
	off, _ := f.Seek(0, io.SeekCurrent)
	if off > 1<<20 {
		t.Errorf("EstimateCost read %d bytes of the body through GetBody, more than the 1 MiB (%d) promised", off, 1<<20)
	}
}

// The Transport's estimate of a request's cost reads GetBody's body while
// the request's context lasts: a GetBody whose body does not answer (a
// pipe, a file on a stalled network mount) held RoundTrip past its
// context's end, for as long as the body would not answer.
func TestEstimateStopsAtContextEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.test/v1/chat/completions", strings.NewReader(`{"messages":[]}`))
		req.GetBody = func() (io.ReadCloser, error) { return pr, nil }
		done := make(chan error, 1)
		go func() {
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			done <- err
		}()
		time.Sleep(5 * time.Second)
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("RoundTrip: %v, want the context's end", err)
			}
		default:
			t.Errorf("RoundTrip still estimating 4s after its context ended")
			pw.CloseWithError(errors.New("released"))
			<-done
		}
	})
}
