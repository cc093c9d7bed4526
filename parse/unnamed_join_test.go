package parse

import (
	"net/http"
	"testing"
	"time"
)

// An unnamed RateLimit-Policy merges into the current limit equal to
// its own (the package documentation): 10;w=60 beside
// RateLimit-Limit: 10 is one quota, with its window and what is left of
// it, also when a draft-07 Dictionary of another limit comes with them
// (it was handed the items alone, and the policy was reported twice: once
// with its window and no remaining count, once with the remaining count
// and no window).
func TestUnnamedPolicyJoinsTripletBesideDictionary(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{
		"Ratelimit-Policy":    {"10;w=60"},
		"Ratelimit":           {"limit=5, remaining=2, reset=3"},
		"Ratelimit-Limit":     {"10"},
		"Ratelimit-Remaining": {"7"},
		"Ratelimit-Reset":     {"30"},
	}
	var ten []Quota
	for _, q := range Header(h, now) {
		if q.Limit == 10 {
			ten = append(ten, q)
		}
	}
	if len(ten) != 1 || ten[0].Window != time.Minute || ten[0].Remaining != 7 || ten[0].Reset != 30*time.Second {
		t.Errorf("quotas of limit 10 = %s\nwant one: limit=10 window=1m0s remaining=7 reset=30s", formatQuotas(ten))
	}
}
