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

// A refusal whose Retry-After ends exactly at the request's context
// deadline cannot be retried: the retry could only go at the instant the
// context ends. The refusal must come back at once, as one whose wait
// would outlast the deadline does (doc.go, "Retries"); RoundTrip slept
// the whole wait, drained the refusal, and failed with the context's
// error (a wait ending at the deadline was judged to fit).
func TestRefusalWaitEndingAtDeadlineGoesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		sends := 0
		tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sends++
			if err := r.Context().Err(); err != nil {
				return nil, err // as net/http does
			}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"2"}},
				Body: io.NopCloser(strings.NewReader("slow down")), ContentLength: 9, Request: r}, nil
		})}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/x", nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		took := time.Since(start)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests || took != 0 {
			status := 0
			if resp != nil {
				status = resp.StatusCode
				resp.Body.Close()
			}
			t.Fatalf("RoundTrip = status %d, error %v after %v, %d send(s); want the 429 back at once (the retry could only go as the deadline passes)", status, err, took, sends)
		}
		if b, _ := io.ReadAll(resp.Body); string(b) != "slow down" {
			t.Errorf("refusal body %q, want it unread", b)
		}
		resp.Body.Close()
	})
}

// The same edge for a pacing wait: a request whose pace lets it start
// exactly at its context deadline can never be sent; it should fail at
// once with a *WaitError, as a wait that would outlast the deadline does;
// it slept until the deadline and failed with the context's error.
func TestPacingWaitEndingAtDeadlineFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sends := 0
		tr := &polite.Transport{MaxRate: 0.5, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sends++
			if err := r.Context().Err(); err != nil {
				return nil, err // as net/http does
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/a", nil)
		if resp, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		} else {
			resp.Body.Close()
		}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second) // MaxRate 0.5: the next start is 2s away
		defer cancel()
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/b", nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		took := time.Since(start)
		if resp != nil {
			resp.Body.Close()
		}
		var we *polite.WaitError
		if !errors.As(err, &we) || took != 0 {
			t.Fatalf("RoundTrip = %v (%T) after %v, %d send(s) in all; want a *WaitError at once", err, err, took, sends)
		}
	})
}
