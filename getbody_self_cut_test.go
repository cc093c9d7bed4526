package polite_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
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
				body := polite.NewStuckBody()
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
				if n := body.Closes(); n != 1 {
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
	var closedAtSend int32
	tr := &polite.Transport{Cost: cost, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		closedAtSend = sb.closed.Load()
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
	if sent != text || closedAtSend != 0 || sb.closed.Load() != 1 {
		t.Errorf("sent %q, its Body closed %d times before; closed %d times in all; want the whole body, closed once, after its send",
			sent, closedAtSend, sb.closed.Load())
	}
}

// The Body GetBody returns, as a Transport.Cost sees it, in the ways a
// Cost function may treat it, each closed once in all: a Cost that
// bounds its read by closing it from a timer (the read ends with the
// request's context: the Body is the request's, still to be sent); one
// that panics after the context's end cut its read; one that keeps it,
// and closes it after the request was sent; and a request whose context
// ends while it waits for its turn, after the estimate, by the default
// estimate and by a Cost.
func TestOwnBodyClosedOnceByCost(t *testing.T) {
	newReq := func(ctx context.Context, body io.ReadCloser) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://llm.example/v1/chat/completions", nil)
		req.Body, req.ContentLength = body, -1
		req.GetBody = func() (io.ReadCloser, error) { return body, nil }
		return req
	}
	unsent := roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("sent")
	})

	t.Run("closed by the Cost's timer", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
			defer cancel()
			body := polite.NewStuckBody()
			cost := func(r *http.Request) polite.Cost {
				b, _ := r.GetBody()
				time.AfterFunc(100*time.Millisecond, func() { b.Close() })
				io.Copy(io.Discard, b)
				return polite.Cost{}
			}
			_, err := (&polite.Transport{Cost: cost, Base: unsent}).RoundTrip(newReq(ctx, body))
			if !errors.Is(err, context.DeadlineExceeded) || body.Closes() != 1 {
				t.Errorf("RoundTrip: %v, Body closed %d times; want the context's end, closed once", err, body.Closes())
			}
		})
	})

	t.Run("a Cost panicking after the cut", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			body := polite.NewStuckBody()
			cost := func(r *http.Request) polite.Cost {
				polite.EstimateCost(r)
				panic("cost")
			}
			time.AfterFunc(time.Second, cancel)
			func() {
				defer func() { recover() }()
				(&polite.Transport{Cost: cost, Base: unsent}).RoundTrip(newReq(ctx, body))
			}()
			if n := body.Closes(); n != 1 {
				t.Errorf("Body closed %d times, want 1", n)
			}
		})
	})

	t.Run("kept by the Cost, closed after the send", func(t *testing.T) {
		const text = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
		sb := &sharedBody{r: bytes.NewReader([]byte(text))}
		ctx, cancel := context.WithCancel(t.Context())
		var kept io.ReadCloser
		cost := func(r *http.Request) polite.Cost {
			kept, _ = r.GetBody()
			io.Copy(io.Discard, kept)
			return polite.Cost{}
		}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		req := newReq(ctx, sb)
		req.GetBody = func() (io.ReadCloser, error) {
			_, err := sb.r.Seek(0, io.SeekStart)
			return sb, err
		}
		resp, err := (&polite.Transport{Cost: cost, Base: base}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		cancel()
		kept.Close()
		if n := sb.closed.Load(); n != 1 {
			t.Errorf("Body closed %d times, want 1", n)
		}
	})

	for _, c := range []struct {
		name string
		cost func(*http.Request) polite.Cost
	}{
		{"default estimate", nil},
		{"Cost calling EstimateCost", polite.EstimateCost},
		{"Cost closing what GetBody returns", func(r *http.Request) polite.Cost {
			if r.GetBody == nil {
				return polite.Cost{} // the first request's, a GET
			}
			b, _ := r.GetBody()
			defer b.Close()
			io.Copy(io.Discard, b)
			return polite.Cost{Tokens: 1}
		}},
	} {
		t.Run("waiting, "+c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// The first request holds the only slot; the second,
				// estimated, waits for it until its context ends.
				release := make(chan struct{})
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					<-release
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				tr := &polite.Transport{Cost: c.cost, Base: base, MaxConcurrency: 1}
				go func() {
					req, _ := http.NewRequest(http.MethodGet, "https://llm.example/v1/models", nil)
					if resp, err := tr.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
				}()
				synctest.Wait()
				const text = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
				sb := &sharedBody{r: bytes.NewReader([]byte(text))}
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				req := newReq(ctx, sb)
				req.GetBody = func() (io.ReadCloser, error) {
					_, err := sb.r.Seek(0, io.SeekStart)
					return sb, err
				}
				if _, err := tr.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("RoundTrip: %v; want the context's end", err)
				}
				if n := sb.closed.Load(); n != 1 {
					t.Errorf("Body closed %d times, want 1", n)
				}
				close(release)
			})
		})
	}
}
