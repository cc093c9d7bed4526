package control

import (
	"testing"
	"time"
)

// FuzzBound feeds any bytes to UnmarshalBinary, as a Store shared with a
// broken or hostile process may hand back, and Bounds what it accepts at
// an instant within a century of t0, before or after: no request asked
// then, nor in the few milliseconds after, may be held past MaxPause, nor
// may anything panic. The seeds include the states of the far instants'
// tests (bound_far_test.go), which a Bound that left out one of their
// fields lets hold a request until 2076.
func FuzzBound(f *testing.F) {
	seed := func(s *State) {
		b, _ := s.MarshalBinary()
		f.Add(b, int64(0))
	}
	seed(worst())
	seed(withTurns(worst()))
	seed(learnedStartFar())
	seed(statedResetFar())
	f.Fuzz(func(t *testing.T, data []byte, offset int64) {
		var s State
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		now := t0.Add(time.Duration(offset % int64(100*365*24*time.Hour)))
		cfg := Config{}
		s.Bound(now, &cfg)
		for i := range 3 {
			at := now.Add(time.Duration(i) * time.Millisecond)
			var l Lease
			if h, ok := s.Acquire(at, &cfg, Ask{}, &l); !ok && h.Until().Sub(at) > MaxPause {
				t.Fatalf("Bound at %v, a request asked at %v is held until %v (reason %v): past MaxPause", now, at, h.Until(), h.Reason)
			}
		}
	})
}
