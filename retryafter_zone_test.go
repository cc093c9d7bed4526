package polite_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A refusal whose Retry-After was an HTTP-date in a numeric zone, as RFC
// 5322 writes dates (Go's time.RFC1123Z, PHP's date('r')), asked for no
// wait the Transport could read: the request was resent by the
// fallback's 1 s doubling, eight times in two minutes, and the refusal
// then handed back, RetryAt 3.5 minutes on rather than the hour asked
// for. The offset is applied: 02:00 +0100 is an hour after the Date, not
// two.
func TestTransportRetryAfterNumericZone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) // the bubble's clock
		if !time.Now().Equal(start) {
			t.Fatalf("the bubble starts at %v, not %v", time.Now(), start)
		}
		tr := &polite.Transport{Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			h := http.Header{
				"Date":        {"Sat, 01 Jan 2000 00:00:00 GMT"},
				"Retry-After": {"Sat, 01 Jan 2000 02:00:00 +0100"},
			}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: http.NoBody, Request: req}, nil
		})}
		c := &http.Client{Transport: tr}
		resp, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		at, ok := tr.RetryAt(resp)
		if d := at.Sub(start); !ok || d < time.Hour || d > time.Hour+time.Second {
			t.Errorf("Retry-After %q: RetryAt = start + %v, %v; want an hour on", resp.Header.Get("Retry-After"), d, ok)
		}
	})
}
