package control

import (
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
		{"last attempt", 30 * s, 1, 10 * time.Minute, 0, 10 * time.Minute, 0},
		{"last attempt, deadline", 30 * s, 1, 10 * time.Minute, 2 * time.Minute, time.Minute, 0},
		// (1+600)^(1/7) = 2.495: the first of 7 waits is 1.495 s.
		{"first of seven", s, 7, 10 * time.Minute, 0, 1495 * time.Millisecond, 5 * time.Millisecond},
		// 1000 attempts reach 10 minutes at a factor of 1.0064.
		{"many attempts", s, 1000, 10 * time.Minute, 0, 6400 * time.Microsecond, 100 * time.Microsecond},
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
