package polite_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// panicCloseBody is a body whose Close panics.
type panicCloseBody struct{ io.Reader }

func (panicCloseBody) Close() error { panic("close broken") }

// A Base that breaks the RoundTripper contract by returning a response
// and an error together: send closes the response's body for it, and
// should that Close panic, the grant of the request is released as the
// panic goes on, as on the other paths where polite closes a body while
// it holds a grant (see TestBasePanicBodyClosePanicsReleasesSlot). Before,
// the release ran only when Base itself panicked, and the origin's one
// slot stayed taken until the lease expired (10 minutes by default).
func TestBothNonNilClosePanicReleasesSlot(t *testing.T) {
	nextAfterPanic(t, func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: panicCloseBody{strings.NewReader("x")}}, errors.New("both")
	}, func() *http.Request {
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
		return req
	})
}

// The same for a Base returning (nil, nil): send closes the request's
// body for it, and a Close that panics left the grant held.
func TestNilNilBodyClosePanicReleasesSlot(t *testing.T) {
	nextAfterPanic(t, func(*http.Request) (*http.Response, error) {
		return nil, nil
	}, func() *http.Request {
		req, _ := http.NewRequest(http.MethodPost, "http://api.test/", nil)
		req.Body = panicCloseBody{strings.NewReader("x")}
		return req
	})
}

// nextAfterPanic sends first, answered by broken, through a Transport of
// one request in flight, recovers the panic it ends in, and requires the
// next request to the origin to be sent at once.
func nextAfterPanic(t *testing.T, broken func(*http.Request) (*http.Response, error), first func() *http.Request) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if calls++; calls == 1 {
				return broken(r)
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, MaxConcurrency: 1}
		func() {
			defer func() { recover() }()
			tr.RoundTrip(first())
		}()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("next request to the origin: %v after %v, want it sent at once", err, time.Since(start))
		}
		resp.Body.Close()
	})
}
