package polite

import (
	"testing"
	"time"
)

// An instant read before the shard's lock, or a retry's taken at its
// failure (a second of draining before), reaches reserve after a later
// one's: taken by a first form of stepBack (a second back) for a clock
// step, a request whose instant was 1.5 s old moved the next start back,
// and the next went 8.5 s after the last under a 10 s spacing. Only a
// step of more than clockStep is one now.
func TestStaleInstantIsNoClockStep(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var c ceilings
	k := originKey("https", "api.test").m
	const rate = 0.1 // one start every 10 s
	var ta, tb, tc uint64
	if _, _, ok := c.reserve(k, t0, rate, 0, nil, 0, &ta, time.Time{}, 0, 0); !ok {
		t.Fatal("first reserve held")
	}
	// B asks at t0+2s: held until t0+10s.
	if _, h, ok := c.reserve(k, t0.Add(2*time.Second), rate, 0, nil, 0, &tb, time.Time{}, 0, 0); ok || !h.until.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("B at +2s: granted %v, held until %v; want held until +10s", ok, h.until)
	}
	// C's instant was read at t0+0.5s, before B's; it takes the lock after.
	c.reserve(k, t0.Add(500*time.Millisecond), rate, 0, nil, 0, &tc, time.Time{}, 0, 0)
	// B looks again at t0+8.5s, its turn.
	if _, h, ok := c.reserve(k, t0.Add(8500*time.Millisecond), rate, 0, nil, 0, &tb, time.Time{}, 0, 0); ok {
		t.Errorf("B granted at +8.5s, 8.5s after the last start under a 10s spacing (a request whose instant was read 1.5s before another's moved the pace back; no clock step)")
	} else {
		t.Logf("B held until %v", h.until.Sub(t0))
	}
}

// A start given back (the budget did not confirm it) after a reserve 5 s
// earlier than the latest, which a first form of stepBack took for a clock
// step and moved the next start by, was not found by cancel (e.next !=
// r.next), and kept the key held 5 s. (After a step of more than
// clockStep, so it is still: see stepBack.)
func TestCancelAfterShortStepGivesStartBack(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var c ceilings
	k := originKey("https", "api.test").m
	const rate = 0.1
	var ta, tb, tc uint64
	r, _, ok := c.reserve(k, t0, rate, 0, nil, 0, &ta, time.Time{}, 0, 0)
	if !ok {
		t.Fatal("first reserve held")
	}
	back := t0.Add(-5 * time.Second) // the wall clock stepped back 5 s
	c.reserve(k, back, rate, 0, nil, 0, &tb, time.Time{}, 0, 0)
	c.leave(k, tb) // B stops waiting
	c.cancel(k, r) // A's start was never confirmed: given back
	if _, h, ok := c.reserve(k, back.Add(time.Second), rate, 0, nil, 0, &tc, time.Time{}, 0, 0); !ok {
		t.Errorf("after the only start was given back, a request is held until %v (%v on); want it granted, as before ed6f05e", h.until, h.until.Sub(back.Add(time.Second)))
	}
}
