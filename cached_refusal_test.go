package polite_test

import (
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A 429 a cache served (Age: 30) with Retry-After: 60 paused the origin
// for 60 s from now, 30 s past what the server asked when it made the
// response. The delay counts from then: the origin pauses for what is
// left of it. An Age past the delay leaves the floor of a refusal.
func TestCachedRefusalPausesForWhatIsLeft(t *testing.T) {
	for _, tt := range []struct {
		age         string
		least, most time.Duration
	}{
		{"", 60 * time.Second, 75 * time.Second},
		{"30", 30 * time.Second, 40 * time.Second},
		{"90", 0, 5 * time.Second},
		{"x", 60 * time.Second, 75 * time.Second}, // no valid Age: no cache's
	} {
		t.Run("Age="+tt.age, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					h := http.Header{"Retry-After": {strconv.Itoa(60)}}
					if tt.age != "" {
						h.Set("Age", tt.age)
					}
					return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: http.NoBody, Request: r}, nil
				})
				tr := &polite.Transport{Base: base, MaxAttempts: 1}
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				at, ok := tr.RetryAt(resp)
				if !ok {
					t.Fatal("RetryAt of a 429 = false")
				}
				if d := time.Until(at); d < tt.least || d > tt.most {
					t.Errorf("a 429 with Retry-After: 60 and Age %q pauses the origin %v, want %v to %v", tt.age, d, tt.least, tt.most)
				}
			})
		})
	}
}
