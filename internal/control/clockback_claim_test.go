package control

import (
	"testing"
	"time"
)

// roundTripState returns s through its binary form, or fails t.
func roundTripState(t *testing.T, s *State, what string) *State {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatalf("%s: MarshalBinary: %v", what, err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatalf("%s: UnmarshalBinary(MarshalBinary()) = %v: a Store (redisstore) then starts the key over from zero, "+
			"its pause and MaxRate spacing forgotten; claims %+v", what, err, s.turns.c)
	}
	return &back
}

// TestClockBackClaimDecodes: a request that takes turns, held once by
// MaxRate's next start, asks again after the wall clock stepped back (an
// NTP step of 0.6 s, below the second from which Acquire bounds the state)
// while an older pause still runs at the earlier instant. Its claim was
// rewritten with the pause's end (until) but kept its first ask (since),
// later than until. MarshalBinary wrote it and UnmarshalBinary rejected
// it: the state a Store held could no longer be read, and redisstore
// replaced it with the zero State, the key's pause and spent quota
// forgotten. A claim now never lapses before it begins.
func TestClockBackClaimDecodes(t *testing.T) {
	var s State
	cfg := Config{MaxRate: 0.1} // one request per 10s
	sec := time.Second
	var p Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &p); !ok {
		t.Fatal("setup: probe not granted")
	}
	// Retry-After: 1 pauses the key until about t0+1s.
	s.Release(t0.Add(10*time.Millisecond), &cfg, &p, &Outcome{First: true, Bytes: -1, Refused: true, Refusal: Refusal{
		Wait: sec, Given: true, Reason: ReasonRetryAfter, Retryable: false, MaxWait: 10 * time.Minute}})
	pause := s.pauseUntil
	if pause <= instant(t0) {
		t.Fatal("setup: the key is not paused")
	}
	// A first asks after the pause: held by MaxRate's next start
	// (t0+10s), it claims a turn.
	x := at(pause).Add(500 * time.Millisecond)
	var a Lease
	h, ok := s.Acquire(x, &cfg, Ask{Turns: true}, &a)
	if ok || h.until == 0 {
		t.Fatalf("setup: A at x: granted %v, hold %+v; want held to an instant", ok, h)
	}
	roundTripState(t, &s, "after A's first ask")
	// The wall clock steps back 0.6 s: A wakes and asks again, Since x.
	back := x.Add(-600 * time.Millisecond)
	if instant(back) >= pause {
		t.Fatalf("setup: the step back does not land in the pause")
	}
	h2, ok := s.Acquire(back, &cfg, Ask{Turns: true, Since: x}, &a)
	if ok {
		t.Fatal("setup: A granted after the step back")
	}
	_ = h2
	for _, c := range s.turns.c {
		if c.until < c.since {
			t.Errorf("claim %+v lapses before it begins", c)
		}
	}
	d := roundTripState(t, &s, "after the clock stepped back")
	var la, lb Lease
	ha, oka := s.Acquire(back.Add(time.Millisecond), &cfg, Ask{}, &la)
	hb, okb := d.Acquire(back.Add(time.Millisecond), &cfg, Ask{}, &lb)
	if oka != okb || ha.until != hb.until || ha.Reason != hb.Reason {
		t.Errorf("next Acquire: %v %+v, through the binary form %v %+v", oka, ha, okb, hb)
	}
}
