package polite_test

import (
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A 429 a cache served (Age: 30, its Date 30 s old) with Retry-After: 60
// paused the origin for 60 s from now, 30 s past what the server asked
// when it made the response. The delay counts from then: the origin
// pauses for what is left of it. An Age past the delay leaves the floor
// of a refusal. An Age the Date does not bear out (a refusal made just
// now, stamped with an Age) takes nothing off, and neither does one with
// no Date, or before the key's clock is known.
func TestCachedRefusalPausesForWhatIsLeft(t *testing.T) {
	for _, tt := range []struct {
		name        string
		age         string
		made        time.Duration // how long before its arrival the refusal was made, by its Date; < 0: no Date
		dated       bool          // an answer with rate-limit fields and a Date came first
		least, most time.Duration
	}{
		{"fresh", "", 0, true, 60 * time.Second, 75 * time.Second},
		{"cached 30s", "30", 30 * time.Second, true, 30 * time.Second, 40 * time.Second},
		{"cached 90s", "90", 90 * time.Second, true, 0, 5 * time.Second},
		{"invalid Age", "x", 30 * time.Second, true, 60 * time.Second, 75 * time.Second},
		{"Age on a fresh refusal", "60", 0, true, 60 * time.Second, 75 * time.Second},
		{"Age 60, Date 20s old", "60", 20 * time.Second, true, 40 * time.Second, 50 * time.Second},
		{"no Date", "30", -1, true, 60 * time.Second, 75 * time.Second},
		{"clock not known", "30", 30 * time.Second, false, 60 * time.Second, 75 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					n++
					h := http.Header{}
					if n == 1 {
						h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
						h.Set("RateLimit-Policy", `"p";q=1000;w=60`)
						h.Set("RateLimit", `"p";r=999;t=60`)
						return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: r}, nil
					}
					h.Set("Retry-After", strconv.Itoa(60))
					if tt.age != "" {
						h.Set("Age", tt.age)
					}
					if tt.made >= 0 {
						h.Set("Date", time.Now().Add(-tt.made).UTC().Format(http.TimeFormat))
					}
					return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: http.NoBody, Request: r}, nil
				})
				if !tt.dated {
					n = 1
				}
				tr := &polite.Transport{Base: base, MaxAttempts: 1}
				var resp *http.Response
				for range 2 - min(n, 1) {
					req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
					var err error
					if resp, err = tr.RoundTrip(req); err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				if resp.StatusCode != http.StatusTooManyRequests {
					t.Fatalf("status %d, want the 429", resp.StatusCode)
				}
				at, ok := tr.RetryAt(resp)
				if !ok {
					t.Fatal("RetryAt of a 429 = false")
				}
				if d := time.Until(at); d < tt.least || d > tt.most {
					t.Errorf("a 429 with Retry-After: 60, Age %q and a Date %v old pauses the origin %v, want %v to %v", tt.age, tt.made, d, tt.least, tt.most)
				}
			})
		})
	}
}
