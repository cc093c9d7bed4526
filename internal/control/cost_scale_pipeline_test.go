package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A server that counts exactly what each request declares, asked by two
// workers at once (each sends its next request as soon as its answer is
// read), with requests of 1000 and 3000 tokens in turn. No answer shows
// the server counting more than declared, yet the scale rose to its
// bound: a request in flight when an observation was read was left out of
// what the next answer was compared with, and the answer to it compared
// its own cost with what the next request reserved.
func TestScaleNotRaisedByPipelinedMixedCosts(t *testing.T) {
	var s State
	cfg := Config{}
	now := t0
	level := int64(1_000_000) // the server's, no time passes
	q := func(r int64) []parse.Quota {
		return []parse.Quota{{Unit: "tokens", Limit: 1_000_000, Remaining: r, Reset: 10 * time.Minute, Window: 10 * time.Minute, Dialect: "ietf"}}
	}
	costs := []int64{1000, 3000, 3000, 1000} // a worker's costs, in turn: two workers alternate
	n := 0
	grant := func() (*Lease, int64) {
		c := costs[n%len(costs)]
		n++
		l := new(Lease)
		l.SetCost(Cost{Tokens: c})
		if h, ok := s.Acquire(now, &cfg, Ask{}, l); !ok {
			t.Fatalf("held: %v until +%v", h.Reason, h.Until().Sub(now))
		}
		return l, c
	}
	type req struct {
		l *Lease
		c int64
	}
	// Warm up: one request alone teaches the observation.
	l, c := grant()
	level -= c
	s.Release(now, &cfg, l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: q(level)})

	var flight []req
	for range 2 {
		l, c := grant()
		flight = append(flight, req{l, c})
	}
	max := int64(0)
	for range 200 {
		now = now.Add(10 * time.Millisecond)
		r := flight[0]
		flight = flight[1:]
		level -= r.c // counted exactly as declared, in the order granted
		s.Release(now, &cfg, r.l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: q(level)})
		l, c := grant()
		flight = append(flight, req{l, c})
		if sc := s.costs.units[0].scale; sc > max {
			max = sc
		}
	}
	t.Logf("scale at the end %d, at most %d", s.costs.units[0].scale, max)
	if sc := s.costs.units[0].scale; sc > 100 {
		t.Errorf("scale %d thousandths (the server counted exactly what was declared): requests reserve %d%% more than they cost", sc, (sc+sc/4)/10)
	}
}
