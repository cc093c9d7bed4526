package control

import (
	"math"
	"testing"
	"time"
)

// A refused rate step of a learned quota of one request that leaves more
// than a quarter of the window to try is reverted and left to the next
// step half way to it, not pinned: every rate step of a quota of one adds
// less than a request a window (half way from 187.5 ms to 93.75 ms adds a
// third of one), so that the rule that pins such steps pinned every one of
// them, and nginx's limit_req with no burst, 10 a second, learned at one
// per 187.5 ms, stayed there for 32 windows after each refused step
// (0.575 of ideal, 7 refused of 100).
func TestRefusedRateStepQuotaOneGoesHalfWay(t *testing.T) {
	ms := int64(time.Millisecond)
	now := instant(t0) + int64(time.Minute)
	l := learner{quota: &policy{unit: unitRequests, q: 1, w: 93750000}, trial: stepRate, prev: 187500000, last: stepRate, pinned: stepBurst, pinnedAt: now - int64(time.Second), stride: 1, binding: true}
	l.revert(7, now)
	if l.pinned&stepRate != 0 || l.floor != 93750000 || l.quota.w != 187500000 {
		t.Fatalf("after the refused step: pinned %b, floor %v, w %v; want the rate step free, the floor at the window refused, w back to 187.5ms",
			l.pinned, time.Duration(l.floor), time.Duration(l.quota.w))
	}
	now += minGrowGap * l.quota.w
	l.binding = true
	l.grow(now)
	if l.trial != stepRate || l.quota.w != 140625000 {
		t.Errorf("two windows later: trial %d, w %v; want a rate step on trial to 140.625ms, half way to the window refused", l.trial, time.Duration(l.quota.w))
	}
	// A quota of more than one request still pins such a step.
	m := learner{quota: &policy{unit: unitRequests, q: 10, w: 900 * ms}, trial: stepRate, prev: 1000 * ms, last: stepRate, stride: 1, binding: true}
	m.revert(7, now)
	if m.pinned&stepRate == 0 {
		t.Errorf("10 per 1s, a step to 900ms refused: rate step not pinned; want it pinned (half way adds half a request a window)")
	}
	// So does a quota of one whose refused step leaves a quarter of the
	// window or less: a fixed window passes the step half way, 883 ms
	// from 1.01 s, for several windows.
	o := learner{quota: &policy{unit: unitRequests, q: 1, w: 757500000}, trial: stepRate, prev: 1010 * ms, last: stepRate, stride: 1, binding: true}
	o.revert(7, now)
	if o.pinned&stepRate == 0 {
		t.Errorf("1 per 1.01s, a step to 757.5ms refused: rate step not pinned; want it pinned (a quarter of w left)")
	}
}

// A refused step stays pinned pinWindows learned windows, and for a
// quota of one request at least pinOne windows, up to pinTime: each lapse
// costs a server whose limit did not change two or three refusals, which
// a quota of one request a short window paid every 32 requests.
func TestPinSpan(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, c := range []struct {
		q, w int64
		want int64
	}{
		{1, 100 * ms, 128 * 100 * ms}, // 12.8s
		{2, 100 * ms, 32 * 100 * ms},  // 32 windows: quotas of 2 or more as before
		{3, 100 * ms, 32 * 100 * ms},
		{10, 100 * ms, 32 * 100 * ms},
		{1, 500 * ms, int64(pinTime)}, // 128 windows would be 64s
		{1, 2000 * ms, 32 * 2000 * ms},
		{1, int64(MaxPause), 32 * int64(MaxPause)},
		{maxQuota, 1, 32},
	} {
		l := learner{quota: &policy{unit: unitRequests, q: c.q, w: c.w}}
		if got := l.pinSpan(); got != c.want {
			t.Errorf("q=%d w=%v: pinSpan %v, want %v", c.q, time.Duration(c.w), time.Duration(got), time.Duration(c.want))
		}
	}
	l := learner{quota: &policy{unit: unitRequests, q: 1, w: math.MaxInt64 / 16}}
	if got := l.pinSpan(); got != math.MaxInt64 {
		t.Errorf("w of MaxInt64/16: pinSpan %d, want MaxInt64", got)
	}

	// Through grow: pinned at a quota of one per 105ms, the steps do not
	// grow 32 windows on, and do once 128 windows have passed.
	now := instant(t0) + int64(time.Minute)
	w := 105 * ms
	g := learner{quota: &policy{unit: unitRequests, q: 1, w: w}, pinned: stepsAll, pinnedAt: now, last: stepRate, stride: 1, binding: true}
	g.grow(now + 32*w)
	if g.trial != 0 || g.pinned != stepsAll {
		t.Fatalf("32 windows after the pin: trial %d, pinned %b; want no step, both still pinned", g.trial, g.pinned)
	}
	g.binding = true
	g.grow(now + 128*w)
	if g.trial == 0 || g.pinned != 0 {
		t.Errorf("128 windows after the pin: trial %d, pinned %b; want a step on trial, the pins lapsed", g.trial, g.pinned)
	}
}
