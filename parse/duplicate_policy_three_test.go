package parse

import (
	"net/http"
	"testing"
	"time"
)

// Of three items of one name, windowed and not, the order decided which
// was kept: q/w was compared between items with windows and q alone
// otherwise, an order that is not transitive (10 per second, 50, 100 per
// minute kept 100 per minute; the reverse order, 10 per second).
func TestDuplicatePolicyThreeItemsOrderIndependent(t *testing.T) {
	a := `"a";q=10;w=1`   // 10 per second
	b := `"a";q=50`       // 50, no window
	c := `"a";q=100;w=60` // 100 per minute
	orders := []string{a + ", " + b + ", " + c, c + ", " + b + ", " + a}
	var got []Policy
	for _, v := range orders {
		ps, err := Policies([]string{v})
		if err != nil || len(ps) != 1 {
			t.Fatalf("Policies(%q) = %+v, %v", v, ps, err)
		}
		got = append(got, ps[0])
	}
	if got[0].Quota != got[1].Quota || got[0].Window != got[1].Window {
		t.Errorf("Policies kept q=%d w=%v for %q but q=%d w=%v for %q; want one result whatever the order",
			got[0].Quota, got[0].Window, orders[0], got[1].Quota, got[1].Window, orders[1])
	}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var hs []Quota
	for _, v := range orders {
		qs := Header(http.Header{"Ratelimit-Policy": {v}}, now)
		if len(qs) != 1 {
			t.Fatalf("Header(%q) = %v", v, qs)
		}
		hs = append(hs, qs[0])
	}
	if hs[0].Limit != hs[1].Limit || hs[0].Window != hs[1].Window {
		t.Errorf("Header kept limit %d window %v for %q but limit %d window %v for %q",
			hs[0].Limit, hs[0].Window, orders[0], hs[1].Limit, hs[1].Window, orders[1])
	}
}

// Of two items of q=0, equal in q/w and in q, the first window was kept.
func TestDuplicatePolicyZeroQuotaOrderIndependent(t *testing.T) {
	x, y := `"a";q=0;w=1`, `"a";q=0;w=3600`
	p1, _ := Policies([]string{x + ", " + y})
	p2, _ := Policies([]string{y + ", " + x})
	if len(p1) != 1 || len(p2) != 1 || p1[0].Window != p2[0].Window {
		t.Errorf("Policies kept %+v for one order, %+v for the other", p1, p2)
	}
}

// Every order of every three items of one name keeps one policy.
func TestDuplicatePolicyEveryOrder(t *testing.T) {
	items := []string{`"a";q=10;w=1`, `"a";q=50`, `"a";q=100;w=60`, `"a";q=600;w=60`, `"a";q=0;w=1`,
		`"a";q=0;w=3600`, `"a";q=5`, `"a";q=10`, `"a";q=0`, `"a";q=86400;w=86400`}
	perms := [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for i := range items {
		for j := i + 1; j < len(items); j++ {
			for k := j + 1; k < len(items); k++ {
				set := [3]string{items[i], items[j], items[k]}
				var first Policy
				for n, p := range perms {
					v := set[p[0]] + ", " + set[p[1]] + ", " + set[p[2]]
					ps, err := Policies([]string{v})
					if err != nil || len(ps) != 1 {
						t.Fatalf("Policies(%q) = %+v, %v", v, ps, err)
					}
					if n == 0 {
						first = ps[0]
					} else if ps[0].Quota != first.Quota || ps[0].Window != first.Window {
						t.Errorf("Policies(%q) kept q=%d w=%v; another order kept q=%d w=%v", v, ps[0].Quota, ps[0].Window, first.Quota, first.Window)
					}
				}
			}
		}
	}
}
