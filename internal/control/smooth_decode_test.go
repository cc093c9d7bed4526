package control

import (
	"testing"
	"time"
)

// FuzzUnmarshalBinary's contract: what UnmarshalBinary accepts, the
// controller runs on without panicking. An even pace on trial (tail 2)
// with no learned quota was accepted, and the next acceptance read the
// quota through a nil pointer. The controller writes an even pace only
// with a learned quota: such a state is rejected.
func TestSmoothWithoutQuotaRejected(t *testing.T) {
	b, _ := (&State{gen: 1, learn: learner{cycle: 2}}).MarshalBinary()
	b = append(b, tailSmooth, smoothTrial, 1) // an even pace on trial, from cycle 1
	var s State
	if err := s.UnmarshalBinary(b); err == nil {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("an acceptance panicked: %v", r)
			}
		}()
		cfg := Config{}
		var l Lease
		if _, ok := s.Acquire(t0, &cfg, Ask{}, &l); ok {
			s.Release(t0.Add(time.Millisecond), &cfg, &l, &Outcome{First: true, Bytes: -1})
		}
		t.Errorf("an even pace with no learned quota was read back")
	}
}
