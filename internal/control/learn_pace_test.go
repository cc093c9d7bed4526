package control

import (
	"testing"
	"time"
)

// A learned quota of 4 per 4 s, paced evenly, with starts at 0, 1 and 2
// s, refused at 2.9 s: the rate is cut (1.333 s a start), and the pace
// runs from the refusal (see repace). With the latest start kept apart
// from the log and not moved to the refusal with it, it ran from the
// start at 2 s, and the next waited 0.433 s.
func TestEvenPaceAfterCutRunsFromRefusal(t *testing.T) {
	base := instant(t0)
	sec := int64(time.Second)
	l := learner{quota: &policy{unit: unitRequests, q: 4, w: 4 * sec}, smooth: smoothOn}
	var seq uint64
	for i := range 3 {
		seq++
		l.started(1, base+int64(i)*sec)
	}
	refusedAt := base + 2*sec + 9*sec/10
	g := Lease{seq: seq, epoch: 1, cycle: l.cycle, start: base + 2*sec}
	if overdrew, _ := l.refused(&g, seq, 1, refusedAt, false, false); !overdrew {
		t.Fatalf("the refusal was not taken as the even pace's overdraw (cutRate)")
	}
	pace := l.quota.w / l.quota.q
	if d := l.wait(refusedAt); d < pace {
		t.Errorf("after the cut at the refusal, the next start waits %v, want the even pace from the refusal, %v (lastStart %v before the refusal)",
			time.Duration(d), time.Duration(pace), time.Duration(refusedAt-l.lastStart))
	}
}

// The first refusal of a learned burst switches to the even pace on
// trial, which runs from the refusal. With the latest start kept apart
// from the log and not moved with it, it ran from the burst's last start,
// 200 ms early.
func TestEvenPaceTrialRunsFromRefusal(t *testing.T) {
	base := instant(t0)
	ms := int64(time.Millisecond)
	l := learner{quota: &policy{unit: unitRequests, q: 4, w: 4000 * ms}}
	var seq uint64
	for i := range 4 { // a burst of 4 at 0, 100, 200, 300 ms
		seq++
		l.started(1, base+int64(i)*100*ms)
	}
	// Two of it accepted, the third refused at 500 ms.
	l.accepted(&Lease{seq: 1, epoch: 1, cycle: l.cycle, start: base}, 3, base+400*ms)
	l.accepted(&Lease{seq: 2, epoch: 1, cycle: l.cycle, start: base + 100*ms}, 2, base+450*ms)
	refusedAt := base + 500*ms
	g := Lease{seq: 3, epoch: 1, cycle: l.cycle, start: base + 200*ms}
	if overdrew, _ := l.refused(&g, seq, 1, refusedAt, false, false); !overdrew || l.smooth != smoothTrial {
		t.Fatalf("the burst's refusal did not switch to the even pace (smooth %d)", l.smooth)
	}
	pace := l.quota.w / l.quota.q
	if d := l.wait(refusedAt); d < pace {
		t.Errorf("at the switch to the even pace, the next start waits %v, want %v from the refusal", time.Duration(d), time.Duration(pace))
	}
}

// A State whose only content is a learner's latest start is not zero:
// written as the empty form, it would lose it.
func TestIsZeroCountsLastStart(t *testing.T) {
	s := State{learn: learner{lastStart: instant(t0)}}
	if s.IsZero() {
		t.Errorf("a State with a latest start reports IsZero")
	}
	b, _ := (&State{gen: 1}).MarshalBinary()
	b[1] = 0 // gen 0: every field of the main form zero
	b = append(b, tailStart, 3)
	var n State
	if err := n.UnmarshalBinary(b); err == nil && n.learn.lastStart != 0 && n.IsZero() {
		t.Errorf("UnmarshalBinary accepted a form with lastStart %d that IsZero reports zero", n.learn.lastStart)
	}
}

// A learned quota above exactLog a window, paced evenly, starts q a
// window: its pace counts from the latest start's instant. Counted from
// the end of the log's slot that holds it, each start waited for its
// slot to end: 64 a window, whatever q.
func TestEvenPaceLargeQuota(t *testing.T) {
	for _, q := range []int64{exactLog, 200, 1000, 5000} {
		w := int64(time.Second)
		l := learner{quota: &policy{unit: unitRequests, q: q, w: w}, smooth: smoothOn}
		now, end := instant(t0), instant(t0)+10*w
		n := 0
		for now < end {
			if d := l.wait(now); d > 0 {
				now += d
				continue
			}
			l.started(1, now)
			n++
		}
		if per := int64(n) / 10; per < q*9/10 || per > q+1 {
			t.Errorf("q=%d per second, evenly: %d starts a second, want about %d", q, per, q)
		}
	}
}

// At the even pace, rate steps go half way to the floor a refused step
// left; once within an eighth of the window of it, the rate step is
// pinned, which drops the floor, and after pinWindows learned windows the
// steps grow again. Kept, the floor ended the steps for good, each half
// the last (a server that raised its rate tenfold was sent its old rate
// for as long as it ran).
func TestEvenPaceStepsNearFloorPin(t *testing.T) {
	base := instant(t0)
	ms := int64(time.Millisecond)
	l := learner{quota: &policy{unit: unitRequests, q: 13, w: 1200 * ms}, smooth: smoothOn, stride: 1, floor: 1100 * ms, rated: true, binding: true}
	now := base + int64(time.Minute)
	l.grow(now)
	if l.pinned&stepRate == 0 || l.floor != 0 || l.trial != 0 || l.quota.w != 1200*ms {
		t.Fatalf("a step within an eighth of the window of the floor: pinned %b, floor %v, trial %d, w %v; want the rate pinned, the floor dropped, w as it was",
			l.pinned, time.Duration(l.floor), l.trial, time.Duration(l.quota.w))
	}
	now += pinWindows * l.quota.w
	l.binding = true
	l.grow(now)
	if l.trial != stepRate || l.quota.w >= 1200*ms {
		t.Errorf("pinWindows windows later: trial %d, w %v; want a rate step on trial, below 1.2s", l.trial, time.Duration(l.quota.w))
	}
}
