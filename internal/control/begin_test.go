package control

import (
	"testing"
	"time"
)

// A state forgotten and used again at the same instant (a clock frozen, as
// in a synctest bubble, or coarse), as a Store's state is forgotten in
// place: the end of a lease granted before is not one of the new
// incarnation's. A state was known by its first use alone, and the old
// lease's end freed the new one's slot: a third request went with the
// second still in flight, over MaxConcurrency 1.
func TestForgetAtSameInstantIsNewIncarnation(t *testing.T) {
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
	if _, ok := s.Acquire(now, &cfg, Ask{}, &cur); !ok {
		t.Fatal("the forgotten key's first request held")
	}
	s.Release(now, &cfg, &cur, &stream)
	s.End(now, &cfg, &old)
	if _, ok := s.Acquire(now, &cfg, Ask{}, &third); ok {
		t.Errorf("a third request granted while the new incarnation's first is in flight: over MaxConcurrency 1")
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
