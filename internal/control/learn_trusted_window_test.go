package control

import (
	"testing"
	"time"
)

// A decrease trusted in full (a second in a row counting no more than the
// first) takes its window as well as its count, as far as the rate is at
// most half the one refused, when it counted more than one request; any
// other keeps the window above 70% of the
// last (DESIGN.md §6). A server that served everything for 10 minutes and
// then took 100 a minute was measured at 191,997 per 12 minutes, then
// halved to 95,998 per 8m22s; the third measurement counted 100 in 68 s,
// and the key was paced at 100 per 5m51s.
func TestTrustedDecreaseTakesItsWindow(t *testing.T) {
	sec := int64(time.Second)
	ms := int64(time.Millisecond)
	for _, c := range []struct {
		name        string
		q, w, cut   int64 // the learned quota refused; what the decrease before counted (0: none)
		n, measured int64 // what the measurement counted, and its window
		wantQ       int64
		wantW       int64
	}{
		{"trusted, q cut deep", 95998, 502 * sec, 191997, 100, 68 * sec, 100, 68 * sec},
		{"trusted, q cut deep, a short window", 20, 4 * sec, 20, 2, 100 * ms, 2, 4 * sec * 2 * 2 / 20},
		{"trusted, one request counted", 3, 2 * sec, 3, 1, sec, 1, 2 * sec * 7 / 10},
		{"trusted, q cut little", 20, 4 * sec, 20, 15, sec, 15, 4 * sec * 7 / 10},
		{"not trusted: halved", 20, 4 * sec, 0, 2, 100 * ms, 10, 4 * sec * 7 / 10},
		{"not trusted: counted more than before", 20, 4 * sec, 5, 8, 100 * ms, 10, 4 * sec * 7 / 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := instant(t0)
			l := learner{quota: &policy{unit: unitRequests, q: c.q, w: c.w}, stride: rateStride, burst: c.q, measured: c.w,
				cycle: 5, cycleEpoch: 1, cycleStart: base, cut: c.cut}
			l.pending, l.pendCycle, l.pendQ, l.pendFrom = true, 5, c.n, base
			l.started(2, base+c.measured) // the pause ended: a new epoch, a new cycle
			l.accepted(&Lease{seq: 9, epoch: 2, cycle: l.cycle, start: base + c.measured}, 0, base+c.measured)
			if l.pending {
				t.Fatalf("setup: the measurement did not end")
			}
			if l.quota.q != c.wantQ || l.quota.w != c.wantW {
				t.Errorf("%d per %v refused, %d counted in %v: learned %d per %v, want %d per %v",
					c.q, time.Duration(c.w), c.n, time.Duration(c.measured),
					l.quota.q, time.Duration(l.quota.w), c.wantQ, time.Duration(c.wantW))
			}
		})
	}
}
