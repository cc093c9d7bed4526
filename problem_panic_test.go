package polite_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// panicBody is a response body whose Read panics.
type panicBody struct{}

func (panicBody) Read([]byte) (int, error) { panic("body broken") }
func (panicBody) Close() error             { return nil }

// A refusal the Transport may retry has its problem document read
// (readProblem) while the request still holds its grant: its slot under
// MaxConcurrency, its lease in the budget. Should the body's Read panic,
// the grant is released as the panic goes on, as it is when Base or a
// retry's GetBody panics: it was not, and the key's only slot stayed held
// until Budget.Lease expired, the caller's next request waiting for it.
func TestProblemReadPanicReleasesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		tr := &polite.Transport{MaxConcurrency: 1, MaxWait: time.Hour, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if n.Add(1) == 1 {
				h := http.Header{"Retry-After": {"1"}, "Content-Type": {"application/problem+json"}}
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, ContentLength: -1, Body: panicBody{}, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		func() {
			defer func() { recover() }()
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			tr.RoundTrip(req)
		}()
		if n.Load() != 1 {
			t.Fatalf("%d sends, want 1 (the refusal whose body panicked)", n.Load())
		}
		start := time.Now()
		req2, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req2)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// The key is paused for the refusal's Retry-After (1 s) at most.
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the request after a refusal whose body panicked as its problem document was read waited %v for the slot it held; want the slot released", d)
		}
	})
}
