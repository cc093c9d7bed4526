package control

import (
	"testing"
	"time"
)

// A quota of one request is its own spacing, which each learned window
// tests whole: a rate step of it refused is not pinned for adding less
// than a request a window, as every step of it does, but the next goes
// half way to the window refused (DESIGN.md §6, "a quota of one
// request"). Pinned, the rate stayed at 1 per 187.5ms against nginx's
// limit_req of 10 a second with no burst, which refuses any request sooner
// than 100ms after the last, until the pin lapsed and a burst step was
// refused instead.
func TestOneRequestRateStepGoesHalfWay(t *testing.T) {
	base := instant(t0)
	ms := int64(time.Millisecond)
	w := 187500 * int64(time.Microsecond)
	l := learner{quota: &policy{unit: unitRequests, q: 1, w: w / 2}, stride: 1, burst: 1, measured: time.Second.Nanoseconds(),
		cycle: 9, cycleEpoch: 1, cycleStart: base, last: stepRate, trial: stepRate, trialAt: 9, prev: w,
		pinned: stepBurst, pinnedAt: base - 2*int64(time.Second)} // its burst step refused 2s before
	l.revert(20, base)
	if l.pinned != stepBurst || l.quota.w != w || l.floor != w/2 {
		t.Fatalf("a rate step of 1 per %v refused at 1 per %v: pinned %b, w %v, floor %v; want the rate step not pinned, w %v, floor %v",
			time.Duration(w), time.Duration(w/2), l.pinned, time.Duration(l.quota.w), time.Duration(l.floor), time.Duration(w), time.Duration(w/2))
	}
	l.binding = true
	l.grow(base + 4*w)
	if want := w - w/4; l.trial != stepRate || l.quota.q != 1 || l.quota.w != want {
		t.Errorf("the next step: trial %d, %d per %v; want a rate step to 1 per %v", l.trial, l.quota.q, time.Duration(l.quota.w), time.Duration(want))
	}

	// Two requests a window: the half-way step adds less than one, and is
	// pinned as before.
	l = learner{quota: &policy{unit: unitRequests, q: 2, w: 300 * ms}, stride: 1, burst: 2, measured: time.Second.Nanoseconds(),
		cycle: 9, cycleEpoch: 1, cycleStart: base, last: stepRate, trial: stepRate, trialAt: 9, prev: 400 * ms}
	l.revert(20, base)
	if l.pinned&stepRate == 0 {
		t.Errorf("a rate step of 2 per 400ms refused at 2 per 300ms: pinned %b, want the rate step pinned", l.pinned)
	}
}

// Pins lapse after pinWindows learned windows, and the first step taken
// then tests whether the server changed: refused, both steps are pinned
// again at that one refusal; held, steps go on as before (DESIGN.md §6).
// Tried anew, a burst step refused took a rate step from its refusal
// (see stepSaturated), which a quota of one request refused twice more
// as it bisected: three refusals every 32 windows, 189 of 3,000 requests
// (6%) to nginx's limit_req with no burst.
func TestLapsedPinsRepinAtOneRefusal(t *testing.T) {
	base := instant(t0)
	ms := int64(time.Millisecond)
	w := 105 * ms
	mk := func() learner {
		l := learner{quota: &policy{unit: unitRequests, q: 1, w: w}, stride: 1, burst: 1, measured: time.Second.Nanoseconds(),
			cycle: 9, cycleEpoch: 1, cycleStart: base, last: stepRate}
		l.pin(stepsAll, base)
		l.binding = true
		return l
	}
	l := mk()
	now := base + pinWindows*w
	l.grow(now)
	if l.trial != stepBurst || l.pinned != 0 || !l.lapsed() {
		t.Fatalf("setup: pinWindows windows on, trial %d, pinned %b, lapsed %v; want a burst step on trial, nothing pinned", l.trial, l.pinned, l.lapsed())
	}
	l.revert(30, now)
	if l.pinned != stepsAll || l.pinnedAt != now || l.trial != 0 || l.quota.q != 1 || l.quota.w != w {
		t.Errorf("the first step since the pins lapsed, refused: pinned %b at %v, trial %d, %d per %v; want both pinned again at the refusal, 1 per %v, no step on trial",
			l.pinned, time.Duration(l.pinnedAt-base), l.trial, l.quota.q, time.Duration(l.quota.w), time.Duration(w))
	}

	// Held, the step ends the lapse: a step refused later is reverted
	// as any other.
	l = mk()
	l.grow(now)
	l.cycle, l.cycleOK = l.trialAt+1, 2 // a whole window begun after the step, accepted
	l.binding = true
	l.grow(now + 2*w)
	if l.lapsed() || l.quota.q != 2 {
		t.Fatalf("setup: the burst step held: lapsed %v, q %d", l.lapsed(), l.quota.q)
	}
	if l.trial == 0 {
		t.Fatalf("setup: no step taken after the burst step held")
	}
	l.revert(40, now+3*w)
	if l.pinned == stepsAll {
		t.Errorf("a step refused after one held since the pins lapsed: both pinned (%b), want the step alone reverted", l.pinned)
	}
}

// A quota of one request refused off trial is cut as a rate (DESIGN.md
// §6): a measurement of its lone probe refused counts nothing and leaves q
// and w as they were. A leaky bucket of 100 per 5 minutes (burst 50),
// learned at 1 per 2.25s where it takes one every 3s, refused that key
// every 9s for as long as it ran: 717 in 100 minutes.
func TestOneRequestRefusedOffTrialCut(t *testing.T) {
	base := instant(t0)
	ms := int64(time.Millisecond)
	w := 2250 * ms
	l := learner{quota: &policy{unit: unitRequests, q: 1, w: w}, stride: 1, burst: 1, measured: 4044 * ms, smooth: smoothNo,
		cycle: 9, cycleEpoch: 1, cycleStart: base, last: stepBurst}
	g := Lease{seq: 40, epoch: 1, cycle: 9, start: base}
	overdrew, _ := l.refused(&g, 40, 1, base+50*ms, false, false)
	if !overdrew || l.pending || l.quota.q != 1 || l.quota.w != w+w/3 {
		t.Errorf("a quota of 1 per %v, its lone probe refused off trial: overdrew %v, measuring %v, %d per %v; want the rate cut, 1 per %v, no measurement",
			time.Duration(w), overdrew, l.pending, l.quota.q, time.Duration(l.quota.w), time.Duration(w+w/3))
	}
}
