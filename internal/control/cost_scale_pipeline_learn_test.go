package control

import (
	"fmt"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// pipeline runs workers that each send their next request as soon as
// their answer is read (a pipeline: the next grant comes before the next
// answer), every request declaring cost tokens, against a server that
// counts k times what is declared and states what is left. The server
// counts a request when it answers it (answers come in the order granted),
// or, onArrival, when it arrives (at once: its answer states every request
// in flight counted). It returns the scale the key learned after rounds
// answers.
func pipeline(t *testing.T, workers int, k float64, cost int64, rounds int, onArrival bool) int64 {
	t.Helper()
	var s State
	cfg := Config{}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	level := int64(100_000_000)
	q := func(r int64) []parse.Quota {
		return []parse.Quota{{Unit: "tokens", Limit: 100_000_000, Remaining: r, Reset: 10 * time.Minute, Window: 10 * time.Minute, Dialect: "ietf"}}
	}
	grant := func() *Lease {
		l := new(Lease)
		l.SetCost(Cost{Tokens: cost})
		if h, ok := s.Acquire(now, &cfg, Ask{}, l); !ok {
			t.Fatalf("held: %v until +%v", h.Reason, h.Until().Sub(now))
		}
		if onArrival {
			level -= int64(float64(cost) * k)
		}
		return l
	}
	answer := func(l *Lease) {
		if !onArrival {
			level -= int64(float64(cost) * k)
		}
		s.Release(now, &cfg, l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: q(level)})
	}
	answer(grant()) // the first observation
	var flight []*Lease
	for range workers {
		flight = append(flight, grant())
	}
	for range rounds {
		now = now.Add(10 * time.Millisecond)
		l := flight[0]
		flight = flight[1:]
		answer(l)
		flight = append(flight, grant())
	}
	return s.costs.units[0].scale
}

// A first form of the fix for the scale raised by requests of mixed costs
// two at a time (TestScaleNotRaisedByPipelinedMixedCosts) counted, in a
// bound below, the request answered and every other request in flight
// when the observation was read, and gave an answer to one of them no
// bound above. In a pipeline every answer is to such a request: a server
// counting 1.3 or 2 times what is declared was never learned from its
// answers (the scale stayed 0), whether it counts a request on its arrival
// or at its answer, and learned only from refusals.
func TestScaleLearnedByPipeline(t *testing.T) {
	for _, arrival := range []bool{false, true} {
		for _, workers := range []int{2, 4} {
			for _, k := range []float64{1.3, 2} {
				t.Run(fmt.Sprintf("arrival=%v,workers=%d,k=%.1f", arrival, workers, k), func(t *testing.T) {
					got := pipeline(t, workers, k, 1000, 300, arrival)
					want := int64((k - 1) * 1000 * 3 / 4)
					if got < want {
						t.Errorf("scale %d after 300 pipelined answers of a server counting %.1f× what is declared, want at least %d (sequentially: %d)",
							got, k, want, pipeline(t, 1, k, 1000, 300, arrival))
					}
				})
			}
		}
	}
}
