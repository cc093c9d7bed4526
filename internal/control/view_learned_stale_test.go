package control

import (
	"testing"
	"time"
)

// View (and so Inspect and RetryAt) judged whether the learned quota
// paces from the policies as they were, while Acquire first marks a live
// observation past its reset stale. A key whose server stated a legacy
// limit without its window, seen within the minute but past its reset, was
// "stated" for View and not for Acquire: View left the learned pace out
// and said a request may go now, while Acquire held it for the learned
// quota.
func TestViewLearnedPaceWithStaleLiveObservation(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 15, 4, 0, 0, time.UTC)
	now := instant(t0)
	mk := func() *State {
		s := &State{born: now - int64(time.Minute)}
		s.ramp.open = true
		s.policies = []policy{{unit: unitRequests, q: 100, live: true, minR: 5,
			deadline: now - int64(time.Second), seen: now - int64(10*time.Second)}}
		q := &policy{unit: unitRequests, q: 1, w: int64(10 * time.Second)}
		q.log.add(now-int64(time.Second), q.q, q.w, 1)
		s.learn.quota = q
		return s
	}
	v := mk().View(t0)
	var l Lease
	h, ok := mk().Acquire(t0, &Config{}, Ask{}, &l)
	if ok {
		t.Fatalf("Acquire granted; View.NextStart %v", v.NextStart)
	}
	t.Logf("Acquire holds until %v (%v); View.NextStart %v", h.Until(), h.Reason, v.NextStart)
	if v.NextStart.Before(h.Until()) {
		t.Errorf("View.NextStart = %v, but Acquire at the same instant holds until %v for %v", v.NextStart, h.Until(), h.Reason)
	}
}
