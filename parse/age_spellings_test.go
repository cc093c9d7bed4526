package parse

import (
	"net/http"
	"testing"
	"time"
)

// Of two spellings of Age, neither canonical, the one ageValues read was
// the first the map's iteration met: ReadFresh and FromCache answered at
// random, where every other field spelled in several cases is joined in
// name order.
func TestAgeSpellingsInNameOrder(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	policy := http.Header{
		"Ratelimit-Policy": {`"api";q=100;w=60`},
		"Ratelimit":        {`"api";r=50;t=30`},
	}
	for _, tt := range []struct {
		age    http.Header
		cached bool
	}{
		{http.Header{"age": {"0"}, "AGE": {"5"}}, true},   // "AGE" first
		{http.Header{"age": {"5"}, "Age": {"0"}}, false},  // "Age" first
		{http.Header{"Age": {}, "age": {"5"}}, true},      // "Age" has no line
		{http.Header{"aGe": {"0"}, "agE": {"7"}}, false},  // "aGe" first
		{http.Header{"age": {"3", "0"}, "AgE": {}}, true}, // the first line counts
		{http.Header{"Age": {"0"}}, false},
		{http.Header{"age": {"12"}}, true},
	} {
		h := http.Header{}
		for k, v := range policy {
			h[k] = v
		}
		for k, v := range tt.age {
			h[k] = v
		}
		for range 200 {
			if got := FromCache(h); got != tt.cached {
				t.Fatalf("FromCache(%v) = %v, want %v", tt.age, got, tt.cached)
			}
			var r Reader
			if q, _ := r.ReadFresh(h, now, time.Time{}); (len(q) == 0) != tt.cached {
				t.Fatalf("ReadFresh with %v: %d quotas, want none: %v", tt.age, len(q), tt.cached)
			}
		}
	}
}
