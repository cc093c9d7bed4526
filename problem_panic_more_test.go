package polite_test

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

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

// problemRefusal returns a Base whose first answer is a 429 asking for
// retryAfter, with a problem document as body, and 200s after.
func problemRefusal(body *countingPanicBody, retryAfter string, sent *atomic.Int32) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		if sent.Add(1) == 1 {
			h := http.Header{"Retry-After": {retryAfter}, "Content-Type": {"application/problem+json"}}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, ContentLength: -1, Body: body, Request: r}, nil
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
}

// roundTripRecovered sends a GET to api.test through tr, recovering a panic.
func roundTripRecovered(t *testing.T, tr *polite.Transport) {
	defer func() { recover() }()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
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
		roundTripRecovered(t, tr)
		if sent.Load() != 1 {
			t.Fatalf("%d sends, want 1", sent.Load())
		}
		start := time.Now()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if d := time.Since(start); d < 20*time.Second {
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
		roundTripRecovered(t, tr)
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
		body := &countingPanicBody{closePanics: true}
		tr := &polite.Transport{MaxConcurrency: 1, MaxWait: time.Hour, Base: problemRefusal(body, "1", &sent)}
		roundTripRecovered(t, tr)
		if sent.Load() != 1 {
			t.Fatalf("%d sends, want 1", sent.Load())
		}
		start := time.Now()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the request after a refusal whose body panicked in Read and Close waited %v for the slot it held; want the slot released", d)
		}
	})
}

// closePanicBody is a request body whose Close panics.
type closePanicBody struct{}

func (closePanicBody) Read([]byte) (int, error) { return 0, io.EOF }
func (closePanicBody) Close() error             { panic("close broken") }

// Should Base panic, send's guard released the grant after closing the
// request's body: a Close that panicked too skipped the release, and the
// key's only slot stayed held until Budget.Lease expired.
func TestBasePanicBodyClosePanicsReleasesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		tr := &polite.Transport{MaxConcurrency: 1, MaxWait: time.Hour, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if n.Add(1) == 1 {
				panic("base broken")
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		func() {
			defer func() { recover() }()
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/", closePanicBody{})
			tr.RoundTrip(req)
		}()
		start := time.Now()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the request after a Base and a body Close that both panicked waited %v for the slot; want it released", d)
		}
	})
}
