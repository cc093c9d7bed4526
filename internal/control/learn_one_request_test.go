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

// A refused step stays pinned for pinWindows learned windows, and until
// the learned quota could have started pinStarts requests, an hour at
// most: each lapse
// tries the steps again, a refusal or three, and at a request a window
// 32 windows made that one refusal every ten requests or so (nginx's
// limit_req with no burst, learned at 1 per 105ms, refused three times
// every 3.4s).
func TestPinLastsPinStarts(t *testing.T) {
	base := instant(t0)
	ms := int64(time.Millisecond)
	for _, c := range []struct {
		q, w  int64
		lapse int64 // how long after the pin a step is taken again
	}{
		{1, 105 * ms, pinStarts * 105 * ms},
		{4, 400 * ms, pinStarts * 100 * ms},
		{20, 4000 * ms, pinWindows * 4000 * ms},   // 32 windows start 640
		{1, int64(time.Minute), int64(time.Hour)}, // 256 starts take longer than an hour
	} {
		l := learner{quota: &policy{unit: unitRequests, q: c.q, w: c.w}, stride: 1, burst: c.q, measured: c.w, last: stepBurst}
		l.pin(stepsAll, base)
		l.binding = true
		l.grow(base + c.lapse - 1)
		if l.trial != 0 {
			t.Errorf("%d per %v, pinned: a step %v later (trial %d), want none before %v",
				c.q, time.Duration(c.w), time.Duration(c.lapse-1), l.trial, time.Duration(c.lapse))
		}
		l.grow(base + c.lapse)
		if l.trial == 0 {
			t.Errorf("%d per %v, pinned: no step %v later, want one", c.q, time.Duration(c.w), time.Duration(c.lapse))
		}
	}
}
