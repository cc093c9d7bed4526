package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// Two units no request of this process declares, E and F, each stated
// spent by one answer and full by the next, alternately (another client
// spends them in turn), beside three units kept: a unit added because its
// quota was spent stays, and the two do not evict each other on every
// answer (taken as spare once full again, each evicted the other, its
// quotas dropped and a new unit allocated).
func TestSpentUnitsNoChurn(t *testing.T) {
	pts := Cost{Unit: "points", Amount: 1}
	q := func(u string, r int64) parse.Quota {
		return parse.Quota{Policy: u, Unit: u, Limit: 1000, Window: time.Minute, Remaining: r, Reset: 30 * time.Second, Dialect: "ietf"}
	}
	var s State
	cfg := &Config{}
	evictions := 0
	last := ""
	for i := range 10 {
		now := t0.Add(time.Duration(i) * time.Second)
		l := new(Lease)
		l.SetCost(pts)
		if _, ok := s.Acquire(now, cfg, Ask{}, l); !ok {
			t.Fatalf("answer %d: points request held", i)
		}
		ans := []parse.Quota{q("points", 900), q("h1", 500), q("h2", 500)}
		if i%2 == 0 {
			ans = append(ans, q("F", 1000), q("E", 500))
		} else {
			ans = append(ans, q("E", 1000), q("F", 500))
		}
		s.Release(now.Add(time.Millisecond), cfg, l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: ans})
		if len(s.costs.units) == maxCostUnits {
			if n := s.costs.units[3].name; last != "" && n != last {
				evictions++
			}
			last = s.costs.units[3].name
		}
	}
	if evictions > 1 {
		t.Errorf("over 10 answers, units E and F took each other's place %d times", evictions)
	}
}
