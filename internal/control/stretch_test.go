package control

import (
	"math"
	"testing"
	"time"
)

// stretch spreads a probe's attempts left over the time measured so far
// and half the most it may wait, each wait twice the time measured at
// most: its last attempt waits all that, and one with attempts enough
// waits no longer than the learner's pace asks.
func TestStretch(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s := time.Second
	for _, tt := range []struct {
		name      string
		measured  time.Duration // since the measurement began; 0: no probe
		left      int
		maxWait   time.Duration
		deadline  time.Duration // from now; 0: none
		want, tol time.Duration
	}{
		{"no probe", 0, 7, 10 * time.Minute, 0, 0, 0},
		// Twice the 30 s measured at most.
		{"last attempt", 30 * s, 1, 10 * time.Minute, 0, time.Minute, 0},
		{"last attempt, MaxWait", 30 * s, 1, 20 * s, 0, 10 * s, time.Microsecond},
		// Half of half the 30 s the deadline leaves.
		{"last attempt, deadline", 30 * s, 1, 10 * time.Minute, 30 * s, 7500 * time.Millisecond, 0},
		{"last attempt, MaxWait a century", 30 * s, 1, math.MaxInt64, 0, time.Minute, 0},
		{"last attempt, a day measured", 24 * time.Hour, 1, math.MaxInt64, 0, MaxPause / 2, 0},
		// (1+300)^(1/7) = 2.260: the first of 7 waits is 1.260 s.
		{"first of seven", s, 7, 10 * time.Minute, 0, 1260 * time.Millisecond, 5 * time.Millisecond},
		// (1+300/200)^(1/3) = 1.357: 71.4 s after 200 s.
		{"third from last", 200 * s, 3, 10 * time.Minute, 0, 71442 * time.Millisecond, 5 * time.Millisecond},
		// 1000 attempts reach 5 minutes at a factor of 1.0057.
		{"many attempts", s, 1000, 10 * time.Minute, 0, 5723 * time.Microsecond, 5 * time.Microsecond},
		{"no attempt left", 30 * s, 0, 10 * time.Minute, 0, 0, 0},
		{"deadline past", 30 * s, 3, 10 * time.Minute, -s, 0, 0},
	} {
		now := t0.Add(time.Hour)
		n := instant(now)
		l := &Lease{}
		if tt.measured > 0 {
			l.measuring = n - int64(tt.measured)
		}
		r := &Refusal{Retryable: tt.left > 0, Left: tt.left, MaxWait: tt.maxWait}
		if tt.deadline != 0 {
			r.Deadline = now.Add(tt.deadline)
		}
		got, least := stretch(now, n, r, l)
		if d := got - tt.want; d > tt.tol || d < -tt.tol {
			t.Errorf("%s: stretch = %v, want %v ±%v", tt.name, got, tt.want, tt.tol)
		}
		if tt.left == 1 && least != got {
			t.Errorf("%s: least = %v, want all of the wait, its last attempt", tt.name, least)
		}
	}
}

// A request refused for longer than the measurement it probes is spread
// over its own time refused; woken early, once the measurement has ended,
// no sooner than the attempts it has left after its retry still reach as
// far: never, for its last.
func TestStretchLeast(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s := time.Second
	for _, tt := range []struct {
		name              string
		measured, refused time.Duration
		left              int
		want, least, tol  time.Duration
	}{
		// Twice the 30 s measured, its last attempt: all of it.
		{"last attempt", 30 * s, 0, 1, time.Minute, time.Minute, 0},
		// (1+300/60)^(1/3) = 1.817: 49.0 s after 60 s refused, and the
		// two after it reach 5 minutes from 37.5 s refused (300/(9-1)).
		{"refused longer", 2 * s, 60 * s, 3, 49027 * time.Millisecond, 0, 5 * time.Millisecond},
		// Twice the 10 s: 20 s, all of it, for the two after it need
		// 37.5 s refused.
		{"third from last, early", 10 * s, 0, 3, 20 * s, 20 * s, 0},
		// Twice the 20 s refused, and one after it, from 150 s refused.
		{"second from last", 5 * s, 20 * s, 2, 40 * s, 40 * s, 0},
		// (1+300/100)^(1/2) = 2: 100 s after 100 s refused; the one
		// after it reaches 5 minutes from 150 s refused, 50 s on.
		{"second from last, long refused", 5 * s, 100 * s, 2, 100 * s, 50 * s, 0},
		// The six after it reach 5 minutes from 412 ms refused
		// (300/(729-1)).
		{"first of seven", s, 0, 7, 1260 * time.Millisecond, 412 * time.Millisecond, 5 * time.Millisecond},
		// A request refused a second ago, probing a measurement begun
		// 100 s before: (1+300/100)^(1/3) = 1.587, 58.7 s, and woken
		// early, its two after it reach 5 minutes from 37.5 s of its
		// own time refused, 36.5 s from now: the measurement that woke
		// it ended, and the next is new.
		{"joined a long measurement", 100 * s, s, 3, 58740 * time.Millisecond, 36500 * time.Millisecond, 5 * time.Millisecond},
	} {
		now := t0.Add(time.Hour)
		n := instant(now)
		l := &Lease{measuring: n - int64(tt.measured)}
		r := &Refusal{Retryable: true, Left: tt.left, MaxWait: 10 * time.Minute}
		if tt.refused > 0 {
			r.Since = now.Add(-tt.refused)
		}
		got, least := stretch(now, n, r, l)
		if d := got - tt.want; d > tt.tol || d < -tt.tol {
			t.Errorf("%s: stretch = %v, want %v ±%v", tt.name, got, tt.want, tt.tol)
		}
		if d := least - tt.least; d > tt.tol || d < -tt.tol {
			t.Errorf("%s: least = %v, want %v ±%v", tt.name, least, tt.least, tt.tol)
		}
	}
}

// A probe's wait lengthened by stretch holds it while the measurement it
// probed goes on, and is its least once that measurement has ended (or
// the key was forgotten, its state new).
func TestProbedWaitEndsWithMeasurement(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cfg := &Config{}
	var s State
	from := instant(t0)
	s.learn.pending, s.learn.pendFrom = true, from
	now := t0.Add(40 * time.Second)
	ask := Ask{After: now.Add(10 * time.Minute), AfterReason: ReasonBackoff, Probed: from, Least: now.Add(20 * time.Second)}
	var l Lease
	h, ok := s.Acquire(now, cfg, ask, &l)
	if ok {
		t.Fatal("granted while the measurement it probed goes on")
	}
	if got, want := h.Until(), ask.After; !got.Equal(want) {
		t.Errorf("held until %v, want %v", got, want)
	}
	// Another measurement: not the one it probed. Held to its least.
	s.learn.pendFrom = from + int64(time.Second)
	if h, ok := s.Acquire(now, cfg, ask, &l); ok || !h.Until().Equal(ask.Least) {
		t.Errorf("granted %v, held until %v; want held until its least, %v", ok, h.Until(), ask.Least)
	}
	if _, ok := s.Acquire(ask.Least, cfg, ask, &l); !ok || l.late {
		t.Errorf("at its least, granted %v, late %v; want granted, not late (its measurement over)", ok, l.late)
	}
	// Its measurement still on at After: granted late, its acceptance a
	// bound of the window from above.
	var s1 State
	s1.learn.pending, s1.learn.pendFrom = true, from
	if _, ok := s1.Acquire(ask.After, cfg, ask, &l); !ok || !l.late {
		t.Errorf("at After, measuring: granted %v, late %v; want granted, late", ok, l.late)
	}
	// A new state (the key forgotten): held to its least too.
	var s2 State
	if h, ok := s2.Acquire(now, cfg, ask, &l); ok || !h.Until().Equal(ask.Least) {
		t.Errorf("new state: granted %v, held until %v; want held until %v", ok, h.Until(), ask.Least)
	}
	// Without Probed, After holds as it is.
	ask.Probed = 0
	var s3 State
	if h, ok := s3.Acquire(now, cfg, ask, &l); ok || !h.Until().Equal(ask.After) {
		t.Errorf("no measurement probed: granted %v, held until %v; want held until After", ok, h.Until())
	}
}
