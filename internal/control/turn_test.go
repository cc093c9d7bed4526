package control

import (
	"testing"
	"time"
)

// TestLeave checks that a request that stops waiting gives up its place:
// the claim counts it no more, ends with its last request, and the
// requests held behind it look again (the generation moves on).
func TestLeave(t *testing.T) {
	cfg := Config{MaxRate: 2} // one start per 500ms
	var s State
	var l Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &l); !ok {
		t.Fatal("first request not granted")
	}
	s.Release(t0, &cfg, &l, &Outcome{First: true})
	ask := func(at time.Duration, since time.Duration, again bool) (Hold, bool) {
		var l Lease
		a := Ask{Turns: true}
		if again {
			a.Since = t0.Add(since)
		}
		return s.Acquire(t0.Add(at), &cfg, a, &l)
	}
	// a and b first ask at 100ms, c at 200ms: c is held behind them.
	ask(100*time.Millisecond, 100*time.Millisecond, false)
	ask(100*time.Millisecond, 100*time.Millisecond, false)
	if h, ok := ask(200*time.Millisecond, 200*time.Millisecond, false); ok || !h.Until().Equal(t0.Add(550*time.Millisecond)) {
		t.Fatalf("c: granted %v, held until %v; want held behind the claim, until 550ms", ok, h.Until())
	}
	gen := s.Generation()
	s.Leave(t0.Add(100 * time.Millisecond)) // a leaves: b still counts
	if len(s.turns.c) != 2 || s.turns.c[0].n != 1 || s.Generation() != gen {
		t.Fatalf("after one leave: claims %+v, generation %d (was %d)", s.turns.c, s.Generation(), gen)
	}
	s.Leave(t0.Add(100 * time.Millisecond)) // b leaves: the claim ends
	if len(s.turns.c) != 1 || s.turns.c[0].since != instant(t0.Add(200*time.Millisecond)) || s.Generation() != gen+1 {
		t.Fatalf("after the last leave: claims %+v, generation %d (was %d)", s.turns.c, s.Generation(), gen)
	}
	s.Leave(t0.Add(300 * time.Millisecond)) // no such claim: nothing
	if len(s.turns.c) != 1 || s.Generation() != gen+1 {
		t.Fatalf("a leave of no claim changed the state: claims %+v, generation %d", s.turns.c, s.Generation())
	}
	// c, now the oldest, goes at the pace's next start.
	if _, ok := ask(500*time.Millisecond, 200*time.Millisecond, true); !ok {
		t.Fatal("c not granted at 500ms")
	}
	if len(s.turns.c) != 0 {
		t.Fatalf("claims left after the last grant: %+v", s.turns.c)
	}
}

// TestTurnsBounded checks that a key keeps at most maxTurns claims, the
// oldest.
func TestTurnsBounded(t *testing.T) {
	cfg := Config{MaxRate: 0.01} // one start per 100s
	var s State
	var l Lease
	s.Acquire(t0, &cfg, Ask{}, &l)
	s.Release(t0, &cfg, &l, &Outcome{First: true})
	for i := range 3 * maxTurns {
		at := t0.Add(time.Duration(3*maxTurns-i) * time.Millisecond) // youngest first
		var l Lease
		s.Acquire(at, &cfg, Ask{Turns: true}, &l)
	}
	if len(s.turns.c) != maxTurns {
		t.Fatalf("%d claims kept, want %d", len(s.turns.c), maxTurns)
	}
	for i, c := range s.turns.c {
		if want := instant(t0.Add(time.Duration(i+1) * time.Millisecond)); c.since != want {
			t.Fatalf("claim %d first asked at %d, want %d (the oldest kept)", i, c.since, want)
		}
	}
}
