package polite_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A refusal whose Date is five hours behind the caller's clock, as a
// server writing its local time under "GMT" sends it, asking to retry at
// an HTTP-date a minute away by the caller's clock: measured from the
// Date, the wait was five hours and a minute. A Date more than 10 minutes
// behind is taken for one that lies, and the date is waited for by now (a
// date just past by now, rounded down, asks for no wait). Within 10
// minutes, or for a date more than a minute past by now (a server whose
// clock is that late), the Date rules. Five hours ahead, a date a minute
// away by now read as past: a date more than 10 minutes past by the Date,
// and at most 10 minutes ahead by now, is waited for by now.
func TestRetryAfterDateFarOff(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name        string
		date, retry time.Time
		want        time.Duration
	}{
		{"five hours behind", now.Add(-5 * time.Hour), now.Add(time.Minute), time.Minute},
		{"eleven minutes behind", now.Add(-11 * time.Minute), now.Add(time.Minute), time.Minute},
		{"nine minutes behind", now.Add(-9 * time.Minute), now.Add(time.Minute), 10 * time.Minute},
		{"a late clock's date", now.Add(-5 * time.Hour), now.Add(-5*time.Hour + time.Minute), time.Minute},
		{"five hours behind, a date just past", now.Add(-5 * time.Hour), now.Add(-400 * time.Millisecond), 0},
		{"five hours behind, a date a minute past", now.Add(-5 * time.Hour), now.Add(-time.Minute), 0},
		{"five hours behind, a date 61 seconds past", now.Add(-5 * time.Hour), now.Add(-61 * time.Second), 5*time.Hour - 61*time.Second},
		{"five hours ahead", now.Add(5 * time.Hour), now.Add(5*time.Hour + time.Minute), time.Minute},
		{"five hours ahead, a right clock's date", now.Add(5 * time.Hour), now.Add(time.Minute), time.Minute},
		{"five hours ahead, a date 11 minutes ahead by now", now.Add(5 * time.Hour), now.Add(11 * time.Minute), 0},
		{"nine minutes ahead, a right clock's date", now.Add(9 * time.Minute), now.Add(2 * time.Minute), 0},
	} {
		h := http.Header{
			"Date":        {tt.date.Format(http.TimeFormat)},
			"Retry-After": {tt.retry.Format(http.TimeFormat)},
		}
		if d, ok := polite.RetryAfter(h, now); !ok || d != tt.want {
			t.Errorf("%s: RetryAfter = %v, %v; want %v, true", tt.name, d, ok, tt.want)
		}
	}
}

// A server whose Date is five hours behind (its local time under "GMT")
// answers a request, so that the key estimates the server's clock five
// hours behind ours; its next answer, a 429 with no Date (as a proxy or
// gateway in front of it may send), asks to retry at an HTTP-date just
// past by the caller's clock (rounded down to its second). Under a Date
// five hours behind the same date asks for no wait (TestRetryAfterDateFarOff,
// "five hours behind, a date just past"), and package parse reads a reset
// measured from such an estimate, with no Date, alike (a reset just past
// is due). A date past by now was measured from the estimate: 5 h, and
// the next request failed with a WaitError. The estimate is doubted as a
// Date that far off is.
func TestRetryAfterEstimateFarBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)))
		var n atomic.Int64
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			now := time.Now()
			h := http.Header{}
			status := http.StatusOK
			switch n.Add(1) {
			case 2:
				status = http.StatusTooManyRequests
				h.Set("Retry-After", now.Add(-400*time.Millisecond).UTC().Format(http.TimeFormat))
			default:
				h.Set("Date", now.Add(-5*time.Hour).UTC().Format(http.TimeFormat))
				h.Set("X-RateLimit-Limit", "100")
				h.Set("X-RateLimit-Remaining", "90")
				h.Set("X-RateLimit-Reset", "60")
			}
			return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
		})
		tr, resp := afterDated(t, base)
		// Retried at once (the date is past): answered 200. Returned as
		// it is, its wait read past MaxWait (10 minutes): a 429.
		if resp.StatusCode != http.StatusOK {
			t.Errorf("a 429 asking to retry at a date 400 ms past: status %d handed back after %d requests, want the retry sent and answered 200", resp.StatusCode, n.Load())
		}
		// And the key must not be held for the 5 hours of the estimate.
		if err := getErr(tr, "http://api.test/c"); err != nil {
			t.Errorf("the next request: %v, want it sent", err)
		}
	})
}

// The same five hours ahead: the key estimates the server's clock five
// hours ahead, and a 429 with no Date asks to retry at an HTTP-date a
// minute away by the caller's clock (the server's limiter is right, its
// Date is not). Under a Date five hours ahead such a date is waited for
// by now (TestRetryAfterDateFarOff, "five hours ahead, a right clock's
// date"), and package parse reads a reset measured from such an estimate,
// with no Date, alike ("estimate an hour ahead, no Date: from now").
// The shorter of the waits from now and from the estimate was kept: 0,
// and the request was sent again at once, into the refusal, 8 times.
func TestRetryAfterEstimateFarAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)))
		var n, refused atomic.Int64
		var until time.Time
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			now := time.Now()
			h := http.Header{}
			status := http.StatusOK
			if n.Add(1) == 2 {
				until = now.Add(time.Minute).Truncate(time.Second).Add(time.Second)
			}
			if now.Before(until) {
				status = http.StatusTooManyRequests
				refused.Add(1)
				h.Set("Retry-After", until.UTC().Format(http.TimeFormat))
			} else {
				h.Set("Date", now.Add(5*time.Hour).UTC().Format(http.TimeFormat))
				h.Set("X-RateLimit-Limit", "100")
				h.Set("X-RateLimit-Remaining", "90")
				h.Set("X-RateLimit-Reset", "60")
			}
			return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
		})
		_, resp := afterDated(t, base)
		if got := refused.Load(); got != 1 || resp.StatusCode != http.StatusOK {
			t.Errorf("a 429 asking to retry a minute away by now: %d refusals, final status %d, want 1 refusal and the retry a minute later answered 200", got, resp.StatusCode)
		}
	})
}

// afterDated sends a request through a Transport over base, so that the
// key learns the server's clock from its Date, and a second one 300 ms
// later, whose response it returns (its body closed) with the Transport.
func afterDated(t *testing.T, base http.RoundTripper) (*polite.Transport, *http.Response) {
	t.Helper()
	tr := &polite.Transport{Base: base}
	if err := getErr(tr, "http://api.test/a"); err != nil {
		t.Fatalf("first request: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/b", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("second request: %v", err)
	}
	resp.Body.Close()
	return tr, resp
}
