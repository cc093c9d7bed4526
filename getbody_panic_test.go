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

// A retry's GetBody runs while the retry holds its grant (its slot under
// MaxConcurrency, its lease in the budget). Should it panic, the grant is
// released as the panic goes on, as send releases it when Base panics:
// it was not, and the caller that recovered found the key's only slot
// held for the whole Budget.Lease, its next request waiting over 10
// minutes.
func TestGetBodyPanicReleasesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		tr := &polite.Transport{MaxConcurrency: 1, MaxWait: time.Hour, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Body != nil {
				r.Body.Close()
			}
			if n.Add(1) == 1 {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/", strings.NewReader("x"))
		req.GetBody = func() (io.ReadCloser, error) { panic("GetBody broken") }
		func() {
			defer func() { recover() }()
			tr.RoundTrip(req)
		}()
		start := time.Now()
		req2, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req2)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the request after a GetBody that panicked waited %v for the slot it held; want the slot released", d)
		}
	})
}
