package polite_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A gateway fails for 35 s, then the origin serves everything; one request
// under a deadline of a minute, alone, with the default attempts. Its
// attempts, at waits of 1, 2, 4, 8 and 16 s (each ±50%), may all fall in
// the failure, the sixth just before its end; the seventh's wait, 32 s
// ±50%, drawn past what the deadline leaves, gave the request up with
// 25 s and two attempts left (in about a third of the runs). That wait is
// now shortened to half of what the deadline leaves, once a request: the
// retry goes after the gateway is back, with time left for its answer.
func TestTransientRetryShortenedToDeadline(t *testing.T) {
	const runs = 200
	failed := 0
	for range runs {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				time.Sleep(100 * time.Millisecond)
				code := http.StatusOK
				if time.Since(start) < 35*time.Second {
					code = http.StatusBadGateway
				}
				return &http.Response{StatusCode: code, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			tr := &polite.Transport{Base: base, RetryTransient: true}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				failed++
			}
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	if failed > 0 {
		t.Errorf("%d of %d requests failed, want none: each had a minute and the gateway failed for 35 s", failed, runs)
	}
}

// Near its deadline, a request's waits shorten once only: against a
// gateway that never recovers, a request under a deadline of 10 s is sent
// no more often than its backoff's doublings and one wait shortened to
// the deadline allow (1, 2 and 4 s waits, ±50%, and half of what is left
// then: five attempts at most), and gives up before its deadline.
func TestTransientRetryShortenedOnce(t *testing.T) {
	for range 100 {
		synctest.Test(t, func(t *testing.T) {
			sent := 0
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent++
				return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			tr := &polite.Transport{Base: base, RetryTransient: true, MaxAttempts: 100}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			if err != nil || resp.StatusCode != http.StatusBadGateway || sent > 5 || time.Since(start) >= 10*time.Second {
				t.Fatalf("after %v: %d sent, err %v; want the last 502 back before the deadline, 5 sent at most", time.Since(start), sent, err)
			}
		})
	}
}
