package control

import (
	"testing"
	"time"
)

// A gateway fails everything; 20 failed flights (a second apart) have
// counted when the clock steps back an hour (an NTP step). Every other
// instant the state holds is bounded from the new now (see acquireAt,
// boundAt); a failure before retryBudget.failAt counts at once. Skipped
// until now passed failAt+RefusalFloor, an hour later, ten minutes more
// of failures, a second apart, counted no flight: no outage, no pause,
// and the callers' requests went at the rate of their loops.
func TestTransientClockBackCounts(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var s State
	cfg := Config{}
	now := t0
	for range 20 {
		now = now.Add(time.Second)
		s.Release(now.Add(time.Millisecond), &cfg, grantNow(t, &s, &cfg, now), &gateway502)
	}
	if s.retry.run != 20 {
		t.Fatalf("run %d after 20 flights a second apart, want 20", s.retry.run)
	}
	now = now.Add(-time.Hour) // the clock steps back
	for range 600 {
		now = now.Add(time.Second)
		var l Lease
		if _, ok := s.Acquire(now, &cfg, Ask{}, &l); !ok {
			break // paused: the outage began
		}
		s.Release(now.Add(time.Millisecond), &cfg, &l, &gateway502)
	}
	if !s.retry.outage() {
		t.Errorf("after a step back of the clock by an hour, 600 more failed flights a second apart: run %d, no outage (failAt %v after now)",
			s.retry.run, time.Duration(s.retry.failAt-instant(now)))
	}
}
