package control

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// Before any answer states a unit of cost, requests reserve in early, at
// most maxCostUnits other units, and the token units always. Four requests
// in flight costing in four other units (a, b, c, d) leave room for a
// request of 5000 tokens granted next: the answer that first states tokens
// (7000 left, written before that request arrived) takes it off, and a
// third request of 5000 waits (with the four others filling early, the
// tokens request reserved nothing, and the third went against 2000 truly
// left).
func TestEarlyTokensNotCrowdedOut(t *testing.T) {
	requests := []parse.Quota{{Unit: "requests", Limit: 500, Remaining: 499, Reset: 120 * time.Millisecond, Dialect: "openai"}}
	tokens := func(left int64) []parse.Quota {
		return append(slices.Clone(requests), parse.Quota{Unit: "tokens", Limit: 12000, Remaining: left, Reset: time.Duration(12000-left) * time.Second / 200, Dialect: "openai"})
	}
	tok := Cost{Tokens: 5000}
	for _, others := range []int{1, 4} {
		t.Run(fmt.Sprint("others=", others), func(t *testing.T) {
			steps := []fstep{
				{0, 'a', "P", Cost{}, nil, ReasonNone},
				{0, 'r', "P", Cost{}, requests, ReasonNone},
			}
			for i := range others {
				steps = append(steps, fstep{time.Second, 'a', fmt.Sprint("O", i), Cost{Unit: string(rune('a' + i)), Amount: 1}, nil, ReasonNone})
			}
			steps = append(steps,
				fstep{time.Second, 'a', "A", tok, nil, ReasonNone},
				fstep{time.Second, 'a', "B", tok, nil, ReasonNone},
				fstep{1100 * time.Millisecond, 'r', "A", tok, tokens(7000), ReasonNone},
				fstep{1100 * time.Millisecond, 'a', "C", tok, nil, ReasonQuota}, // 2000 left once B is counted
			)
			var s State
			warm(t, &s, 8)
			runFSteps(t, &s, &Config{}, steps)
		})
	}
}

// warm opens the ramp to at least n in flight with requests that cost
// nothing and answer slowly, before t0.
func warm(t *testing.T, s *State, n int32) {
	t.Helper()
	at := t0.Add(-time.Minute)
	for round := 0; round < 50 && !(s.ramp.open && (s.ramp.cwnd == 0 || s.ramp.cwnd >= n)); round++ {
		var ls []*Lease
		for {
			l := new(Lease)
			if _, ok := s.Acquire(at, &Config{}, Ask{}, l); !ok {
				break
			}
			ls = append(ls, l)
		}
		at = at.Add(300 * time.Millisecond)
		for _, l := range ls {
			s.Release(at, &Config{}, l, &Outcome{First: true, Served: true, Bytes: -1})
		}
	}
	t.Logf("ramp: open %v cwnd %d", s.ramp.open, s.ramp.cwnd)
}
