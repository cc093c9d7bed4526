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
	for _, back := range []int64{0, 40, 62} {
		fresh := back == 62
		p := policy{q: 63, skips: true, deadline: 23 * s}
		l := Lease{tested: 22 * s}
		p.phase(&l, false, false, back, 21*s, 22*s, 21*s+20*int64(time.Millisecond))
		if got := p.lead > 0; got != fresh {
			t.Errorf("%d of 63 back: lead %v; want a lead only from a fresh window", back, time.Duration(p.lead))
		}
	}
}

// A lead taken is void at the first answer of a window it opened that
// counts less than half of the quota back: a sliding log's (or a
// bucket's) reset, a second after the one before, is its oldest start's,
// not a fixed window the test proved late, and the lead sent a request
// into the full log (a sliding log of 20 per 1 s, 200 ms away: refused in
// 2 to 6 runs of 20). A fixed window another client shares keeps it.
func TestPhaseLeadVoidOnStaleWindow(t *testing.T) {
	const s = int64(time.Second)
	for _, back := range []int64{0, 9, 10, 17, 19} {
		keep := back >= 10 // half of the quota back at least: a fixed window, shared perhaps
		p := policy{q: 20, lead: 980 * int64(time.Millisecond), tested: true, deadline: 24 * s}
		l := Lease{start: 22*s + 20*int64(time.Millisecond)}
		p.phase(&l, false, false, back, 22*s, 23*s, 22*s+220*int64(time.Millisecond))
		if got := p.lead > 0; got != keep {
			t.Errorf("%d of 20 back: lead %v; want it kept by a window that opens with half of its quota back at least", back, time.Duration(p.lead))
		}
	}
}
