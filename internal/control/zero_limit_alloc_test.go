package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A server that states a limit of 0 for a cost quota on every answer costs
// the hot path no allocation more than one stating its limit (see
// TestPricedRequestAllocsOnceUnitKnown): the copy of the answer's quotas
// that reads the 0 as unknown (see unzeroCostLimits) was made on the heap,
// one allocation a request for as long as the server stated 0.
func TestZeroCostLimitAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations under the race detector")
	}
	for _, limit := range []int64{30000, 0} {
		var s State
		cfg := Config{}
		now := t0
		qs := []parse.Quota{
			{Unit: "requests", Limit: 500, Remaining: 499, Reset: 120 * time.Millisecond, Dialect: "openai"},
			{Unit: "tokens", Limit: limit, Remaining: 29000, Reset: 2 * time.Second, Dialect: "openai"},
		}
		out := Outcome{First: true, Served: true, Bytes: 2, Quotas: qs}
		step := func() {
			var l Lease
			l.SetCost(estimatedCost)
			if _, ok := s.Acquire(now, &cfg, Ask{}, &l); !ok {
				t.Fatal("held")
			}
			now = now.Add(time.Microsecond)
			s.Release(now, &cfg, &l, &out)
		}
		for range 10 {
			step() // warm: units known, slices grown
		}
		if n := testing.AllocsPerRun(100, step); n != 0 {
			t.Errorf("tokens limit stated as %d: a priced request, one at a time, %v allocs each; want 0 (as with a limit stated)", limit, n)
		}
	}
}
