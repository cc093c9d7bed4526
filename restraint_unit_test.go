package polite_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A quota lifts Restraint only when it paces the requests: one in a unit
// they cost nothing in (a "widgets" quota; a "tokens" quota for requests
// that declare no tokens) left 16 requests in flight to a key paced by
// nothing.
func TestRestraintKeptForQuotaItDoesNotPace(t *testing.T) {
	tokens := func(*http.Request) polite.Cost { return polite.Cost{Tokens: 10} }
	for _, tc := range []struct {
		name   string
		policy string // RateLimit-Policy; "": no field
		cost   func(*http.Request) polite.Cost
		lifted bool
	}{
		{"nothing stated", "", nil, false},
		{"unknown unit", `"p";q=1000000;qu="widgets";w=1`, nil, false},
		{"tokens, none declared", `"p";q=1000000;qu="tokens";w=1`, nil, false},
		{"tokens, declared", `"p";q=1000000;qu="tokens";w=1`, tokens, true},
		{"requests", `"p";q=1000000;w=1`, nil, true},
		{"requests and widgets", `"w";q=1000000;qu="widgets";w=1, "p";q=1000000;w=1`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := &counter{latency: 100 * time.Millisecond}
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if tc.policy != "" {
						w.Header().Set("RateLimit-Policy", tc.policy)
						w.Header().Set("RateLimit", `"p";r=999999;t=1`)
					}
					c.ServeHTTP(w, r)
				})
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Restraint: &polite.Restraint{}, Cost: tc.cost}
				loop(t, tr, "http://a.example/", "", 16, 3*time.Second)
				if peak := c.peak.Load(); (peak > 4) != tc.lifted {
					t.Errorf("peak in flight %d; Restraint (4) lifted: %v, want %v", peak, peak > 4, tc.lifted)
				}
			})
		})
	}
}
