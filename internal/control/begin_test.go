package control

import (
	"testing"
	"time"
)

// A state forgotten and used again at the same instant (a clock frozen, as
// in a synctest bubble, or coarse), as a Store's state is forgotten in
// place, with a lease granted before still in flight. A state was known by
// its first use alone, and the old lease's end freed the new one's slot:
// a third request went with the second still in flight, over
// MaxConcurrency 1. Then Forget dropped the old lease: the second went
// beside it. The old lease counts now until it ends, and its end frees its
// own slot.
func TestForgetAtSameInstantCountsOldLease(t *testing.T) {
	cfg := Config{MaxConcurrency: 1}
	var s State
	now := t0
	var old, cur, third Lease
	stream := Outcome{First: true, Bytes: -1, Keep: true} // accepted, its body still read
	if _, ok := s.Acquire(now, &cfg, Ask{}, &old); !ok {
		t.Fatal("first request held")
	}
	s.Release(now, &cfg, &old, &stream)
	s.Forget(now, &cfg)
	if _, ok := s.Acquire(now, &cfg, Ask{}, &cur); ok {
		t.Fatal("the forgotten key's first request granted beside the old stream: over MaxConcurrency 1")
	}
	s.End(now, &cfg, &old)
	if _, ok := s.Acquire(now, &cfg, Ask{}, &cur); !ok {
		t.Fatal("the forgotten key's first request held once the old stream ended")
	}
	s.Release(now, &cfg, &cur, &stream)
	if _, ok := s.Acquire(now, &cfg, Ask{}, &third); ok {
		t.Errorf("a third request granted while the second is in flight: over MaxConcurrency 1")
	}
}

// A state forgotten with nothing in flight is a new incarnation, whose
// identity is past the last one's whatever the clock: a lease of the old
// one ends nothing of it.
func TestForgetIdleIsNewIncarnation(t *testing.T) {
	cfg := Config{MaxConcurrency: 1}
	var s State
	var old, cur, third Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &old); !ok {
		t.Fatal("first request held")
	}
	s.Release(t0, &cfg, &old, &Outcome{First: true, Bytes: -1})
	born := s.born
	s.Forget(t0, &cfg)
	if s.born <= born {
		t.Fatalf("forgotten with nothing in flight: identity %d, the one before %d", s.born, born)
	}
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &cur); !ok {
		t.Fatal("the forgotten key's first request held")
	}
	s.Release(t0, &cfg, &cur, &Outcome{First: true, Bytes: -1, Keep: true})
	s.End(t0, &cfg, &old)
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &third); ok {
		t.Errorf("the old incarnation's lease freed the new one's slot: over MaxConcurrency 1")
	}
}

// Begin gives each incarnation an identity past the last one's, however
// the clock stands.
func TestBeginPastFloor(t *testing.T) {
	var a, b State
	x := a.Begin(instant(t0), 0)
	if y := b.Begin(instant(t0), x); y <= x {
		t.Errorf("second incarnation at the same instant: %d, first %d", y, x)
	}
	if z := b.Begin(instant(t0)+int64(time.Hour), 0); z != x+1 {
		t.Errorf("Begin of a state begun changed its identity to %d", z)
	}
	var c State
	if got := c.Begin(maxStored, maxStored); got != maxStored {
		t.Errorf("Begin past maxStored: %d", got)
	}
}
