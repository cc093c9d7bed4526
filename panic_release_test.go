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

// The tests of this file recover a panic of a Base, a body or GetBody
// (caller's code, run while the request holds its grant: its slot under
// MaxConcurrency, its lease in the budget), and then time the next
// request to the key, which the grant left held would keep waiting until
// Budget.Lease (10 minutes) expired.

// countingPanicBody panics on every Read, and on its first Close if
// closePanics; it counts its Closes.
type countingPanicBody struct {
	closes      atomic.Int32
	closePanics bool
}

func (b *countingPanicBody) Read([]byte) (int, error) { panic("body broken") }
func (b *countingPanicBody) Close() error {
	if b.closes.Add(1) == 1 && b.closePanics {
		panic("close broken")
	}
	return nil
}

// closePanicBody is a request body whose Close panics.
type closePanicBody struct{}

func (closePanicBody) Read([]byte) (int, error) { return 0, io.EOF }
func (closePanicBody) Close() error             { panic("close broken") }

// firstThenOK returns a Base whose first answer is first's, and whose
// later answers are 200s; sent counts the sends.
func firstThenOK(sent *atomic.Int32, first func(*http.Request) *http.Response) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		if sent.Add(1) == 1 {
			return first(r), nil
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
}

// problemRefusal returns a Base whose first answer is a 429 asking for
// retryAfter, with body as its problem document, and 200s after.
func problemRefusal(body io.ReadCloser, retryAfter string, sent *atomic.Int32) roundTripFunc {
	return firstThenOK(sent, func(r *http.Request) *http.Response {
		h := http.Header{"Retry-After": {retryAfter}, "Content-Type": {"application/problem+json"}}
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, ContentLength: -1, Body: body, Request: r}
	})
}

// roundTripRecovered sends req through tr, or a GET of api.test if req is
// nil, recovering a panic.
func roundTripRecovered(t *testing.T, tr *polite.Transport, req *http.Request) {
	defer func() { recover() }()
	if req == nil {
		req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
	}
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
}

// nextGet returns how long a GET of api.test through tr takes.
func nextGet(t *testing.T, tr *polite.Transport) time.Duration {
	t.Helper()
	start := time.Now()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return time.Since(start)
}

// A retry's GetBody runs while the retry holds its grant. Should it
// panic, the grant is released as the panic goes on, as send releases it
// when Base panics: it was not, and the caller that recovered found the
// key's only slot held for the whole Budget.Lease, its next request
// waiting over 10 minutes.
func TestGetBodyPanicReleasesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		tr := &polite.Transport{MaxConcurrency: 1, MaxWait: time.Hour, Base: firstThenOK(&n, func(r *http.Request) *http.Response {
			if r.Body != nil {
				r.Body.Close()
			}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}, Body: http.NoBody, Request: r}
		})}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/", strings.NewReader("x"))
		req.GetBody = func() (io.ReadCloser, error) { panic("GetBody broken") }
		roundTripRecovered(t, tr, req)
		if d := nextGet(t, tr); d > 5*time.Second {
			t.Errorf("the request after a GetBody that panicked waited %v for the slot it held; want the slot released", d)
		}
	})
}

// A refusal the Transport may retry has its problem document read while
// the request still holds its grant. Should the body's Read panic, the
// grant is released as the panic goes on: it was not, and the key's only
// slot stayed held until Budget.Lease expired.
func TestProblemReadPanicReleasesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		tr := &polite.Transport{MaxConcurrency: 1, MaxWait: time.Hour, Base: problemRefusal(&countingPanicBody{}, "1", &sent)}
		roundTripRecovered(t, tr, nil)
		if sent.Load() != 1 {
			t.Fatalf("%d sends, want 1 (the refusal whose body panicked)", sent.Load())
		}
		// The key is paused for the refusal's Retry-After (1 s) at most.
		if d := nextGet(t, tr); d > 5*time.Second {
			t.Errorf("the request after a refusal whose body panicked as its problem document was read waited %v for the slot it held; want the slot released", d)
		}
	})
}

// The refusal arrived, with its Retry-After, before its body panicked:
// the guard of its problem document's read finished the request as
// Failed ("no response"), as send's guard does when Base panics, so the
// budget learned nothing of the refusal. The origin asked for 30 s; the
// caller's next request was sent at once.
func TestProblemPanicKeepsRefusalPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		tr := &polite.Transport{MaxWait: time.Hour, Base: problemRefusal(&countingPanicBody{}, "30", &sent)}
		roundTripRecovered(t, tr, nil)
		if sent.Load() != 1 {
			t.Fatalf("%d sends, want 1", sent.Load())
		}
		if d := nextGet(t, tr); d < 20*time.Second {
			t.Errorf("the request after a 429 with Retry-After: 30 (whose body panicked) was sent after %v; want the origin paused ~30s, as for any 429", d)
		}
	})
}

// The guard closed the body as the panic went on; but bounded's timer,
// never stopped since the read panicked, closed it again a second
// (drainTime) later, from a goroutine of its own, and its
// context.AfterFunc stayed registered. A Close that panics there (as this
// body's Read does) is a panic no caller can recover: the process dies.
func TestProblemPanicClosesBodyOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		body := &countingPanicBody{}
		tr := &polite.Transport{MaxWait: time.Hour, Base: problemRefusal(body, "1", &sent)}
		roundTripRecovered(t, tr, nil)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := body.closes.Load(); n != 1 {
			t.Errorf("the body whose Read panicked was closed %d times, want 1: the cut's timer closes it again, later, from its own goroutine", n)
		}
	})
}

// A body whose Read panics may well panic in Close too (a nil inner
// reader, say). The guard closed the body before it released the grant:
// a Close that panicked skipped the release, and the key's only slot
// stayed held until Budget.Lease (10 min) expired.
func TestProblemPanicCloseAlsoPanicsReleasesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		tr := &polite.Transport{MaxConcurrency: 1, MaxWait: time.Hour, Base: problemRefusal(&countingPanicBody{closePanics: true}, "1", &sent)}
		roundTripRecovered(t, tr, nil)
		if sent.Load() != 1 {
			t.Fatalf("%d sends, want 1", sent.Load())
		}
		if d := nextGet(t, tr); d > 5*time.Second {
			t.Errorf("the request after a refusal whose body panicked in Read and Close waited %v for the slot it held; want the slot released", d)
		}
	})
}

// Should Base panic, send's guard released the grant after closing the
// request's body: a Close that panicked too skipped the release, and the
// key's only slot stayed held until Budget.Lease expired.
func TestBasePanicBodyClosePanicsReleasesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{MaxConcurrency: 1, MaxWait: time.Hour, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPut {
				panic("base broken")
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/", closePanicBody{})
		roundTripRecovered(t, tr, req)
		if d := nextGet(t, tr); d > 5*time.Second {
			t.Errorf("the request after a Base and a body Close that both panicked waited %v for the slot; want it released", d)
		}
	})
}

// A 502 whose body is still arriving (no Content-Length) keeps its request
// in flight while it is drained before the retry (Outcome.Keep); the
// drain's read panicking, bounded closed the body and the panic went on,
// but the request was never ended (Transport.end): the key's only slot
// stayed held until Budget.Lease expired, as a refusal's body that
// panicked held it.
func TestTransientDrainPanicReleasesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		body := &countingPanicBody{}
		tr := &polite.Transport{MaxConcurrency: 1, MaxWait: time.Hour, RetryTransient: true,
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if sent.Add(1) == 1 {
					return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{}, ContentLength: -1, Body: body, Request: r}, nil
				}
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})}
		roundTripRecovered(t, tr, nil)
		if sent.Load() != 1 {
			t.Fatalf("%d sends, want 1", sent.Load())
		}
		if n := body.closes.Load(); n != 1 {
			t.Fatalf("setup: the 502's body was closed %d times, want 1 (bounded's guard)", n)
		}
		if d := nextGet(t, tr); d > 10*time.Second {
			t.Errorf("the request after a 502 whose drained body panicked waited %v for the slot it held; want the slot released", d)
		}
	})
}

// A streamed answer stays in flight until its body ends. A caller that
// closed it and recovered the panic of Base's Close found the key's only
// slot held until Budget.Lease expired: Close ended the body after the
// wrapped Close returned, and its panic skipped the end.
func TestStreamClosePanicReleasesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		body := &countingPanicBody{closePanics: true}
		tr := &polite.Transport{MaxConcurrency: 1, MaxWait: time.Hour, Base: firstThenOK(&sent, func(r *http.Request) *http.Response {
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, ContentLength: -1, Body: body, Request: r}
		})}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() { recover() }()
			resp.Body.Close()
		}()
		if n := body.closes.Load(); n != 1 {
			t.Fatalf("setup: the stream's body was closed %d times, want 1", n)
		}
		if d := nextGet(t, tr); d > 5*time.Second {
			t.Errorf("the request after a stream whose Close panicked waited %v for the slot; want it released", d)
		}
	})
}

// RoundTrip closes the request's body when caller code it runs panics, as
// when Base does (TestBodiesClosedOnce). A Transport.Key or Transport.Cost
// that panicked, or a GetBody that panicked while the default estimate
// read an LLM request through it, left the body open: its writer (a pipe,
// say) waited for a reader that was gone.
func TestHookPanicClosesRequestBody(t *testing.T) {
	for _, tt := range []struct {
		name, path string
		set        func(*polite.Transport, *http.Request)
	}{
		{"Key", "/items", func(tr *polite.Transport, _ *http.Request) {
			tr.Key = func(*http.Request) string { panic("Key broken") }
		}},
		{"Cost", "/items", func(tr *polite.Transport, _ *http.Request) {
			tr.Cost = func(*http.Request) polite.Cost { panic("Cost broken") }
		}},
		{"GetBody in the default estimate", "/v1/chat/completions", func(_ *polite.Transport, req *http.Request) {
			req.GetBody = func() (io.ReadCloser, error) { panic("GetBody broken") }
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var sent atomic.Int32
			tr := &polite.Transport{Base: firstThenOK(&sent, func(r *http.Request) *http.Response {
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}
			})}
			body := &closeCounter{Reader: strings.NewReader(`{"model":"m","messages":[]}`)}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test"+tt.path, nil)
			req.Body, req.ContentLength = body, 27
			tt.set(tr, req)
			roundTripRecovered(t, tr, req)
			if sent.Load() != 0 || body.closed != 1 {
				t.Errorf("after the %s panicked: %d sent, the request's body closed %d times; want 0 sent, closed once", tt.name, sent.Load(), body.closed)
			}
		})
	}
}
