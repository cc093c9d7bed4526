package polite_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A GetBody that returns the request's own Body (as the OpenAI and
// Anthropic SDKs' do), whose read by the estimate stalls until the
// request's context ends: the estimate closes the Body to interrupt it,
// and RoundTrip closed it again on its way out (an *os.File answers its
// second Close with an error). It is closed once, by the default estimate
// and by a Transport.Cost that calls EstimateCost alike.
func TestGetBodyReturningBodyItselfCut(t *testing.T) {
	for _, c := range []struct {
		name string
		cost func(*http.Request) polite.Cost
	}{
		{"default estimate", nil},
		{"Cost calling EstimateCost", polite.EstimateCost},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				body := &stalledBody{done: make(chan struct{})}
				tr := &polite.Transport{Cost: c.cost, Base: roundTripFunc(func(*http.Request) (*http.Response, error) {
					t.Error("the request was sent")
					return nil, errors.New("sent")
				})}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://llm.example/v1/chat/completions", nil)
				req.Body, req.ContentLength = body, -1
				req.GetBody = func() (io.ReadCloser, error) { return body, nil }
				time.AfterFunc(time.Second, cancel)
				resp, err := tr.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				if !errors.Is(err, context.Canceled) {
					t.Errorf("RoundTrip: %v; want context.Canceled", err)
				}
				if n := body.closed.Load(); n != 1 {
					t.Errorf("Body closed %d times, want 1", n)
				}
			})
		})
	}
}

// A Transport.Cost that reads the body GetBody returns and closes it, as
// readers of a copy do, where GetBody returns the request's own Body:
// the Body was closed before it was sent. Closing it is left to
// RoundTrip while the request lasts: the request is sent whole, and the
// Body closed once.
func TestCostClosingOwnBody(t *testing.T) {
	const text = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	sb := &sharedBody{r: bytes.NewReader([]byte(text))}
	cost := func(r *http.Request) polite.Cost {
		b, err := r.GetBody()
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		n, _ := io.Copy(io.Discard, b)
		return polite.Cost{Tokens: n / 4}
	}
	var sent string
	tr := &polite.Transport{Cost: cost, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		sent = string(b)
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://llm.example/v1/chat/completions", nil)
	req.Body, req.ContentLength = sb, int64(len(text))
	req.GetBody = func() (io.ReadCloser, error) {
		_, err := sb.r.Seek(0, io.SeekStart)
		return sb, err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if sent != text || sb.closed.Load() != 1 {
		t.Errorf("sent %q; Body closed %d times; want the whole body, closed once", sent, sb.closed.Load())
	}
}

// stalledBody is a request body whose Read blocks until it is closed (a
// pipe, a stalled file), counting its Closes.
type stalledBody struct {
	closed atomic.Int32
	done   chan struct{}
}

func (b *stalledBody) Read([]byte) (int, error) {
	<-b.done
	return 0, io.ErrClosedPipe
}

func (b *stalledBody) Close() error {
	if b.closed.Add(1) == 1 {
		close(b.done)
	}
	return nil
}
