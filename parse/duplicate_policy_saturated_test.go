package parse

import (
	"math"
	"net/http"
	"testing"
	"time"
)

// Of two items of one name whose windows both pass the largest Duration
// (about 292 years), read as it, the lower q is kept, whatever the order
// (DESIGN.md §1.6): q=1 in 10^10 s allows fewer requests than q=2 in
// 10^15 s over any time a process runs, though its q/w is higher.
func TestDuplicatePolicySaturatedWindows(t *testing.T) {
	a, b := `"a";q=2;w=999999999999999`, `"a";q=1;w=10000000000`
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{a + ", " + b, b + ", " + a} {
		ps, err := Policies([]string{v})
		if err != nil || len(ps) != 1 || ps[0].Quota != 1 || ps[0].Window != math.MaxInt64 {
			t.Errorf("Policies(%q) = %+v, %v; want the one policy q=1, its window the largest Duration", v, ps, err)
		}
		qs := Header(http.Header{"Ratelimit-Policy": {v}}, now)
		if len(qs) != 1 || qs[0].Limit != 1 {
			t.Errorf("Header(%q) = %+v; want the one quota of limit 1", v, qs)
		}
		qs, _ = read(nil, http.Header{"Ratelimit-Policy": {v}}, now, time.Time{}, nil, false, false)
		if len(qs) != 1 || qs[0].Limit != 1 {
			t.Errorf("the general path on %q: %+v; want the one quota of limit 1", v, qs)
		}
	}
}
