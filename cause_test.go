package polite_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A request whose context is canceled with a cause while it waits returns
// that cause, as net/http's Transport returns it when the cancel comes
// during the exchange: whichever wait the cancel ends, the caller sees the
// same error. It returned ctx.Err() (context.Canceled) instead: a caller
// that canceled with context.WithCancelCause could not tell its reasons
// apart.
func TestCanceledWaitReturnsCause(t *testing.T) {
	errStop := errors.New("caller stops the crawl")
	ok := func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/robots.txt" {
			time.Sleep(10 * time.Second) // every other request waits for it
			return &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	refuse := func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"30"}}, Body: http.NoBody, Request: r}, nil
	}
	for _, tt := range []struct {
		name  string
		tr    *polite.Transport
		first bool // the first request's wait is the one canceled
	}{
		{"paced", &polite.Transport{Budget: &polite.Budget{MaxRate: 0.1}, Base: roundTripFunc(ok)}, false},
		{"concurrency", &polite.Transport{MaxConcurrency: 1, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		})}, false},
		{"retry", &polite.Transport{Base: roundTripFunc(refuse)}, true},
		{"robots.txt", &polite.Transport{Robots: &polite.Robots{}, Base: roundTripFunc(ok)}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bg, stopAll := context.WithCancel(context.Background())
				defer stopAll()
				if !tt.first {
					// One request takes the origin's budget (or its
					// slot) first.
					go func() {
						req, _ := http.NewRequestWithContext(bg, http.MethodGet, "http://api.test/a", nil)
						if resp, err := tt.tr.RoundTrip(req); err == nil {
							resp.Body.Close()
						}
					}()
					synctest.Wait()
				}
				ctx, cancel := context.WithCancelCause(context.Background())
				time.AfterFunc(time.Second, func() { cancel(errStop) })
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/b", nil)
				resp, err := tt.tr.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				if !errors.Is(err, errStop) {
					t.Errorf("RoundTrip canceled with a cause during its wait: %v, want the cause (%v)", err, errStop)
				}
				stopAll()
				time.Sleep(time.Minute) // a robots.txt fetch ends
			})
		})
	}
}
