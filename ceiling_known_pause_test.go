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

// A request whose wait the budget already knew to outlast its context
// deadline failed at once with a *WaitError only when no local ceiling
// held it: the Transport asks its local ceilings first and the budget
// only once they let the request go (Transport.try), so a request one of
// them held slept out that hold first, though the key's pause, known
// since the last answer, already ruled it out:
//
//   - MaxConcurrency 1 and a body still streaming: the request waited its
//     whole deadline for the slot and failed with the context's bare
//     context.DeadlineExceeded, not a *WaitError carrying Until;
//   - MaxRate 0.1: the request waited out the 10 s spacing, then failed
//     with the *WaitError it could have had at once.
func TestLocalCeilingHoldsNoKnownPauseBack(t *testing.T) {
	t.Run("MaxConcurrency slot held by a stream", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr := &polite.Transport{MaxConcurrency: 1, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				// Accepted, its quota spent for an hour; the body
				// streams (no Content-Length), holding the slot.
				h := http.Header{"Ratelimit-Policy": {`"p";q=10;w=3600`}, "Ratelimit": {`"p";r=0;t=3600`}}
				return &http.Response{StatusCode: http.StatusOK, Header: h, Body: polite.NewStuckBody(), ContentLength: -1, Request: r}, nil
			})}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/a", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()

			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			req2, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/a", nil)
			start := time.Now()
			resp2, err := tr.RoundTrip(req2)
			if resp2 != nil {
				resp2.Body.Close()
			}
			var we *polite.WaitError
			if d := time.Since(start); !errors.As(err, &we) || !we.Deadline || d != 0 {
				t.Errorf("RoundTrip = %v after %v; want a *WaitError (Deadline) at once: the key is paused for an hour, past the 30s deadline", err, d)
			}
		})
	})
	t.Run("MaxRate spacing", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr := &polite.Transport{MaxRate: 0.1, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				// A refusal beyond MaxWait: back to the caller, the key
				// paused for an hour.
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
			})}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/a", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()

			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			req2, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/a", nil)
			start := time.Now()
			resp2, err := tr.RoundTrip(req2)
			if resp2 != nil {
				resp2.Body.Close()
			}
			var we *polite.WaitError
			if d := time.Since(start); !errors.As(err, &we) || !we.Deadline || d != 0 {
				t.Errorf("RoundTrip = %v after %v; want a *WaitError (Deadline) at once: the key is paused for an hour, past the 30s deadline", err, d)
			}
		})
	})
}
