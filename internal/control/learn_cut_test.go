package control

import (
	"testing"
	"time"
)

// A cut applies to the quota that held, and a step holds only once a whole
// window begun after it was accepted (DESIGN.md §6). A refusal off trial
// cut the rate of a quota with a burst step on trial and took the step off
// trial, kept: q stayed 6, which no window had accepted, and nothing would
// test it again. (A rate step on trial was put back.)
func TestCutPutsBackStepOnTrial(t *testing.T) {
	base := instant(t0)
	sec := int64(time.Second)
	l := learner{quota: &policy{unit: unitRequests, q: 5, w: sec}, stride: 1, burst: 5, rated: true, measured: sec,
		cycle: 3, cycleEpoch: 1, cycleStart: base, last: stepRate}
	// A burst step, 5 -> 6, taken in cycle 3, on trial.
	l.quota.q, l.prev, l.trial, l.trialAt = 6, 5, stepBurst, 3
	// A request of cycle 2 (granted before the step) refused.
	g := Lease{seq: 7, epoch: 1, cycle: 2, start: base - sec/2}
	l.refused(&g, 9, 1, base+sec/10, false, false)
	if l.quota.q != 5 {
		t.Errorf("a refusal off trial while a burst step was on trial: q=%d trial=%d, want the step put back (q=5)",
			l.quota.q, l.trial)
	}
}

// The refusal of a learned window's lone probe lengthens the window only
// for a key in bursts, not at the even pace (DESIGN.md §6). A learned 4 per
// 4s paced evenly after its burst was refused had the first even start of
// its next window refused, and the window was lengthened to 5s as if the
// key were in bursts.
func TestEvenPaceRefusalKeepsWindow(t *testing.T) {
	base := instant(t0)
	sec := int64(time.Second)
	ms := int64(time.Millisecond)
	l := learner{quota: &policy{unit: unitRequests, q: 4, w: 4 * sec}, stride: rateStride, burst: 4, measured: 4 * sec}
	var seq uint64
	for i := range 4 { // a burst of 4 at 0, 100, 200, 300 ms
		seq++
		l.started(1, base+int64(i)*100*ms)
	}
	l.accepted(&Lease{seq: 1, epoch: 1, cycle: l.cycle, start: base}, 3, base+400*ms)
	l.accepted(&Lease{seq: 2, epoch: 1, cycle: l.cycle, start: base + 100*ms}, 2, base+450*ms)
	// The third and fourth refused: the even pace, on trial.
	l.refused(&Lease{seq: 3, epoch: 1, cycle: l.cycle, start: base + 200*ms}, seq, 1, base+500*ms, false, false)
	l.refused(&Lease{seq: 4, epoch: 1, cycle: l.cycle, start: base + 300*ms}, seq, 1, base+510*ms, false, false)
	if l.smooth != smoothTrial {
		t.Fatalf("setup: the burst's refusal did not switch to the even pace (smooth %d)", l.smooth)
	}
	now := base + 500*ms
	for range 100 {
		if d := l.wait(now); d > 0 {
			l.held, l.binding = true, true
			now += d
			continue
		}
		seq++
		before := l.cycle
		c := l.started(1, now)
		if c == before {
			l.accepted(&Lease{seq: seq, epoch: 1, cycle: c, start: now}, 0, now+50*ms)
			continue
		}
		// The first start of the next learned window, at the even pace,
		// refused.
		l.refused(&Lease{seq: seq, epoch: 1, cycle: c, start: now}, seq, 1, now+50*ms, false, false)
		if l.smooth != smoothNo {
			t.Fatalf("setup: the even pace refused, smooth %d", l.smooth)
		}
		if l.quota.w > 4*sec {
			t.Errorf("the even pace on trial refused at %v: the learned window lengthened to %v, want 4s",
				time.Duration(now-base), time.Duration(l.quota.w))
		}
		return
	}
	t.Fatalf("setup: no second learned window began")
}
