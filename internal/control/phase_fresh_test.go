package control

import (
	"testing"
	"time"
)

// A test of a window's phase, counted in the next window stated a second
// later, proves a lead only when its answer counts all of the quota back,
// as a fixed window's first answer does: a sliding log's (or a bucket's)
// reset moves by a second as its oldest start does, its answer to the
// test, the last slot, says none is left, and a lead taken from it sent
// the next request into the log still full (1 refused in 8 runs of a
// sliding log of 63 per 4 s, GitHub's fields, 434 ms away).
func TestPhaseLeadNeedsFreshWindow(t *testing.T) {
	const s = int64(time.Second)
	for _, fresh := range []bool{false, true} {
		p := policy{q: 63, skips: true, deadline: 23 * s}
		l := Lease{tested: 22 * s}
		p.phase(&l, false, false, fresh, 21*s, 22*s, 21*s+20*int64(time.Millisecond))
		if got := p.lead > 0; got != fresh {
			t.Errorf("fresh %v: lead %v; want a lead only from a fresh window", fresh, time.Duration(p.lead))
		}
	}
}
