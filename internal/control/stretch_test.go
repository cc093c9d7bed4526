package control

import (
	"math"
	"testing"
	"time"
)

// stretch spreads a probe's attempts left over the time measured so far
// and the most it may wait: its last attempt waits all it may, and one
// with attempts enough waits no longer than the learner's pace asks.
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
		{"last attempt, MaxWait", 30 * s, 1, 20 * s, 0, 20 * s, 0},
		{"last attempt, deadline", 30 * s, 1, 10 * time.Minute, 30 * s, 15 * s, 0},
		{"last attempt, MaxWait a century", 30 * s, 1, math.MaxInt64, 0, time.Minute, 0},
		{"last attempt, a day measured", 24 * time.Hour, 1, math.MaxInt64, 0, MaxPause, 0},
		// (1+600)^(1/7) = 2.495: the first of 7 waits is 1.495 s.
		{"first of seven", s, 7, 10 * time.Minute, 0, 1495 * time.Millisecond, 5 * time.Millisecond},
		// (1+600/200)^(1/3) = 1.587: 117.5 s after 200 s.
		{"third from last", 200 * s, 3, 10 * time.Minute, 0, 117480 * time.Millisecond, 5 * time.Millisecond},
		// 1000 attempts reach 10 minutes at a factor of 1.0064.
		{"many attempts", s, 1000, 10 * time.Minute, 0, 6419 * time.Microsecond, 5 * time.Microsecond},
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
		got := stretch(now, n, r, l)
		if d := got - tt.want; d > tt.tol || d < -tt.tol {
			t.Errorf("%s: stretch = %v, want %v ±%v", tt.name, got, tt.want, tt.tol)
		}
	}
}

// A probe's wait lengthened by stretch holds it while the measurement it
// probed goes on, looked at again at the learner's pace, and ends once
// that measurement has.
func TestProbedWaitEndsWithMeasurement(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cfg := &Config{}
	var s State
	from := instant(t0)
	s.learn.pending, s.learn.pendFrom = true, from
	now := t0.Add(40 * time.Second)
	ask := Ask{After: now.Add(10 * time.Minute), AfterReason: ReasonBackoff, Probed: from}
	var l Lease
	h, ok := s.Acquire(now, cfg, ask, &l)
	if ok {
		t.Fatal("granted while the measurement it probed goes on")
	}
	if got, want := h.Until(), ask.After; !got.Equal(want) {
		t.Errorf("held until %v, want %v", got, want)
	}
	if got, want := h.Wake(), now.Add(20*time.Second); !got.Equal(want) {
		t.Errorf("looked at again at %v, want %v (half the time measured)", got, want)
	}
	// Another measurement: not the one it probed.
	s.learn.pendFrom = from + int64(time.Second)
	if _, ok := s.Acquire(now, cfg, ask, &l); !ok {
		t.Error("held, its measurement over (another began)")
	}
	var s2 State
	s2.learn.pending, s2.learn.pendFrom = false, from
	if _, ok := s2.Acquire(now, cfg, ask, &l); !ok {
		t.Error("held, its measurement over")
	}
	// Without Probed, After holds as it is.
	ask.Probed = 0
	var s3 State
	if _, ok := s3.Acquire(now, cfg, ask, &l); ok {
		t.Error("granted before After, with no measurement probed")
	}
}
