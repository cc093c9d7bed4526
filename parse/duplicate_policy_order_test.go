package parse

import (
	"net/http"
	"testing"
	"time"
)

// DESIGN.md §1.6: when an identifier repeats in RateLimit-Policy, the
// most restrictive item is kept. Of two items of equal q/w the first was
// kept, so that the order of the members decided: "a" as 600 per minute
// then 10 per second kept 600 per minute, which lets a client send 600 at
// once where the server allows 10 in any second. Of two of equal q, one
// stating no window listed first lost the only pace the server stated.
func TestDuplicatePolicyOrderIndependent(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name       string
		a, b       string // the two orders of one field
		wantQuota  int64
		wantWindow time.Duration
	}{
		{"equal q/w: the smaller burst", `"a";q=10;w=1, "a";q=600;w=60`, `"a";q=600;w=60, "a";q=10;w=1`, 10, time.Second},
		{"equal q: the stated window", `"a";q=10;w=60, "a";q=10`, `"a";q=10, "a";q=10;w=60`, 10, time.Minute},
	}
	for _, c := range cases {
		for _, v := range []string{c.a, c.b} {
			ps, err := Policies([]string{v})
			if err != nil || len(ps) != 1 || ps[0].Quota != c.wantQuota || ps[0].Window != c.wantWindow {
				t.Errorf("%s: Policies(%q) = %+v, %v; want q=%d w=%v whatever the order", c.name, v, ps, err, c.wantQuota, c.wantWindow)
			}
			h := http.Header{"Ratelimit-Policy": {v}}
			qs := Header(h, now)
			if len(qs) != 1 || qs[0].Limit != c.wantQuota || qs[0].Window != c.wantWindow {
				t.Errorf("%s: Header(RateLimit-Policy: %s) = %v; want limit %d window %v whatever the order", c.name, v, qs, c.wantQuota, c.wantWindow)
			}
		}
	}
}
