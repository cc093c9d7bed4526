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

// skimLimit is how many bytes of a body EstimateCost reads at most: 64 MiB.
const skimLimit = 64 << 20

// countingReader is a plain io.Reader (no WriterTo) that counts the bytes
// it hands out.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}
func (c countingReader) Close() error { return nil }

// longBody returns a chat request of more than 64 MiB: its first MiB of
// text, counted, and an image past it, skimmed.
func longBody() io.Reader {
	return io.MultiReader(
		strings.NewReader(`{"model":"x","messages":[{"role":"user","content":[{"type":"text","text":"`+strings.Repeat("a", 1<<20)+
			`"},{"type":"image_url","image_url":{"url":"data:image/png;base64,`),
		io.LimitReader(repeatReader('Q'), skimLimit),
		strings.NewReader(`"}}]}],"max_tokens":10}`))
}

// repeatReader is an endless run of one byte.
type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// EstimateCost reads at most the first 64 MiB of the body through
// GetBody: it read a byte more past its bound, to see whether more
// followed.
func TestEstimateCostReadsAtMostLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MiB")
	}
	var read int64
	req, _ := http.NewRequest(http.MethodPost, "http://llm.test/v1/chat/completions", strings.NewReader("{}"))
	req.GetBody = func() (io.ReadCloser, error) {
		return countingReader{longBody(), &read}, nil
	}
	c := polite.EstimateCost(req)
	if c.Tokens == 0 {
		t.Fatalf("no estimate")
	}
	if read > skimLimit {
		t.Errorf("EstimateCost read %d bytes of the body through GetBody, more than the 64 MiB (%d) promised", read, skimLimit)
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
	if testing.Short() {
		t.Skip("writes and reads 64 MiB")
	}
	f, err := os.CreateTemp(t.TempDir(), "body")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, longBody()); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://llm.test/v1/chat/completions", strings.NewReader("{}"))
	req.GetBody = func() (io.ReadCloser, error) {
		f.Seek(0, io.SeekStart)
		return noClose{f}, nil
	}
	if c := polite.EstimateCost(req); c.Tokens == 0 {
		t.Fatalf("no estimate")
	}
	off, _ := f.Seek(0, io.SeekCurrent)
	if off > skimLimit {
		t.Errorf("EstimateCost read %d bytes of the body through GetBody, more than the 64 MiB (%d) promised", off, skimLimit)
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
