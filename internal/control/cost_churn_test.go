package control

import (
	"fmt"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// Requests cost tokens and one of two other units (points, credits); the
// server states five units in every answer: tokens, points, credits,
// input-tokens and output-tokens. The three declared are kept, and the two
// token units no request declares do not take the fourth slot from each
// other on every answer (each "needed" as a token unit, they did, each
// time a new unit, its scale, fits and since lost, and its quotas freed).
func TestUndeclaredUnitsNoChurn(t *testing.T) {
	ans := func(at time.Duration) []parse.Quota {
		var qs []parse.Quota
		for _, u := range []string{"tokens", "points", "credits", "input-tokens", "output-tokens"} {
			qs = append(qs, parse.Quota{Policy: u, Unit: u, Limit: 1 << 30, Window: time.Minute, Remaining: 1 << 30, Reset: time.Minute - at%time.Minute, Dialect: "ietf"})
		}
		return qs
	}
	pts := Cost{Tokens: 10, Unit: "points", Amount: 1}
	crd := Cost{Tokens: 10, Unit: "credits", Amount: 1}
	var s State
	warm(t, &s, 8)
	cfg := &Config{}
	var ls []*Lease
	for i := range 4 {
		l := new(Lease)
		l.SetCost([]Cost{pts, crd}[i%2])
		if _, ok := s.Acquire(t0, cfg, Ask{}, l); !ok {
			t.Fatalf("request %d held", i)
		}
		ls = append(ls, l)
	}
	for i, l := range ls {
		s.Release(t0.Add(time.Duration(i+1)*time.Second), cfg, l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: ans(time.Duration(i+1) * time.Second)})
	}
	var names []string
	for _, u := range s.costs.units {
		names = append(names, u.name)
		if u.name == "output-tokens" || u.name == "input-tokens" {
			continue
		}
		if !u.declared {
			t.Fatalf("unit %s not declared: the setup did not hold", u.name)
		}
	}
	t.Logf("units %v", names)
	// One more answer, as every answer will be, read against the state.
	l := new(Lease)
	l.SetCost(pts)
	if _, ok := s.Acquire(t0.Add(10*time.Second), cfg, Ask{}, l); !ok {
		t.Fatal("held")
	}
	s.costs.units[3].fits = 777 // a mark on the unit kept in the fourth slot
	before := s.costs.units[3].name
	qs := ans(11 * time.Second)
	s.Release(t0.Add(11*time.Second), cfg, l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: qs})
	if u := s.costs.units[3]; u.fits != 777 {
		t.Errorf("the fourth unit (%s before the answer, %s after) was replaced during an answer that stated the same five units", before, u.name)
	}
	allocs := testing.AllocsPerRun(100, func() {
		s.costs.observe(l, qs, instant(t0.Add(12*time.Second)), 0, false, false, false, true, s.seq)
	})
	if allocs != 0 {
		t.Errorf("observe of the same answer allocates %v times per answer: two token units evict each other each time", allocs)
	}
}

// A unit a request needs keeps its quota whatever the order of the
// answer: requests of points, then of credits, 600 each; the server
// states, in every answer, credits (1000 a minute, 400 left after C1)
// before or after the three token units no request declares, and points.
// C2 waits (stated first, credits took a token unit's slot, and tokens,
// stated next and needed as every token unit was, took it straight back:
// C2 went against 400 left).
func TestNeededUnitKeptInSameAnswer(t *testing.T) {
	for _, creditsFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "credits last", true: "credits first"}[creditsFirst], func(t *testing.T) {
			ans := func(at time.Duration, credits int64) []parse.Quota {
				var qs []parse.Quota
				cr := parse.Quota{Policy: "cr", Unit: "credits", Limit: 1000, Window: time.Minute, Remaining: credits, Reset: time.Minute - at, Dialect: "ietf"}
				if creditsFirst {
					qs = append(qs, cr)
				}
				for _, u := range []string{"tokens", "input-tokens", "output-tokens", "points"} {
					qs = append(qs, parse.Quota{Policy: u, Unit: u, Limit: 1 << 30, Window: time.Minute, Remaining: 1 << 30, Reset: time.Minute - at, Dialect: "ietf"})
				}
				if !creditsFirst {
					qs = append(qs, cr)
				}
				return qs
			}
			pts := Cost{Unit: "points", Amount: 1}
			crd := Cost{Unit: "credits", Amount: 600}
			s1 := time.Second
			var s State
			runFSteps(t, &s, &Config{}, []fstep{
				{0, 'a', "P1", pts, nil, ReasonNone},
				{s1, 'r', "P1", pts, ans(s1, 1000), ReasonNone},
				{2 * s1, 'a', "P2", pts, nil, ReasonNone},
				{3 * s1, 'r', "P2", pts, ans(3*s1, 1000), ReasonNone},
				{4 * s1, 'a', "C1", crd, nil, ReasonNone},
				{5 * s1, 'r', "C1", crd, ans(5*s1, 400), ReasonNone},
				{6 * s1, 'a', "C2", crd, nil, ReasonQuota}, // 400 left until +60s
			})
			var names []string
			for _, u := range s.costs.units {
				names = append(names, fmt.Sprintf("%s(declared=%v)", u.name, u.declared))
			}
			t.Logf("units %v", names)
		})
	}
}
