package control

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
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
			a.Since, a.Claimed = t0.Add(since), true // its first ask claimed
		}
		return s.Acquire(t0.Add(at), &cfg, a, &l)
	}
	// a and b first ask at 100ms, c at 200ms: c is held behind them.
	ask(100*time.Millisecond, 100*time.Millisecond, false)
	ask(100*time.Millisecond, 100*time.Millisecond, false)
	if h, ok := ask(200*time.Millisecond, 200*time.Millisecond, false); ok || !h.Until().Equal(t0.Add(500*time.Millisecond)) {
		t.Fatalf("c: granted %v, held until %v; want held behind the claim, until 500ms, when its requests may go", ok, h.Until())
	}
	gen := s.Generation()
	s.Leave(t0.Add(100*time.Millisecond), true, false) // a leaves: b still counts
	if len(s.turns.c) != 2 || s.turns.c[0].n != 1 || s.Generation() != gen {
		t.Fatalf("after one leave: claims %+v, generation %d (was %d)", s.turns.c, s.Generation(), gen)
	}
	s.Leave(t0.Add(100*time.Millisecond), true, false) // b leaves: the claim ends
	if len(s.turns.c) != 1 || s.turns.c[0].since != instant(t0.Add(200*time.Millisecond)) || s.Generation() != gen+1 {
		t.Fatalf("after the last leave: claims %+v, generation %d (was %d)", s.turns.c, s.Generation(), gen)
	}
	s.Leave(t0.Add(300*time.Millisecond), true, false) // no such claim: nothing
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

// TestClaimsNeverRunAhead checks that the turn claims stay within a grace
// or two of the holds the key's rules give, whatever order its requests
// ask in and however late they ask again: requests that take turns under
// a pace of 10ms, woken late (a slow Store, a busy scheduler) or never
// again (a claimant gone without leaving). A request held behind a claim
// was held until the claim lapsed and claimed a grace more, so that each
// layer of claims lapsed turnGrace after the one before: here a claim
// lapsed 129ms past the pace's next start 23ms in; with a quota of 300 a
// second and a Store whose calls took up to 10ms, requests were told of
// waits of 24s (TestTurnsKeepPaceOverSlowStore, in package polite).
func TestClaimsNeverRunAhead(t *testing.T) {
	cfg := Config{MaxRate: 100}
	type waiter struct {
		since   time.Time // zero: not asked yet
		claimed bool
		until   time.Time // its hold's end
	}
	for run := range 50 {
		rng := rand.New(rand.NewPCG(uint64(run), 1))
		var s State
		var ws []waiter
		now := t0
		for step := range 3000 {
			now = now.Add(time.Duration(rng.IntN(3)) * time.Millisecond)
			if len(ws) < 64 && (len(ws) == 0 || rng.IntN(3) == 0) {
				ws = append(ws, waiter{})
			}
			i := rng.IntN(len(ws))
			w := &ws[i]
			switch {
			case rng.IntN(100) == 0:
				ws = slices.Delete(ws, i, i+1) // gone, without leaving
				continue
			case now.Before(w.until) && rng.IntN(4) != 0:
				continue // still asleep
			}
			ask := Ask{Turns: true, Since: w.since, Claimed: w.claimed}
			if w.since.IsZero() {
				w.since = now
			}
			var l Lease
			h, ok := s.Acquire(now, &cfg, ask, &l)
			if ok {
				s.Release(now, &cfg, &l, &Outcome{})
				ws = slices.Delete(ws, i, i+1)
			} else {
				w.claimed, w.until = h.Claimed(), h.Until()
			}
			limit := max(instant(now), s.rateNext) + 2*turnGrace
			for _, c := range s.turns.c {
				if c.until > limit {
					t.Fatalf("run %d, step %d (%v): a claim lapses at %v, %v after the pace's next start %v (or now): want at most 2×turnGrace",
						run, step, now.Sub(t0), time.Duration(c.until-instant(t0)), time.Duration(c.until-max(instant(now), s.rateNext)), time.Duration(s.rateNext-instant(t0)))
				}
			}
		}
	}
}

// rt0 is the origin of the instants of the turn and pace tests below.
var rt0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func rAt(d time.Duration) time.Time { return rt0.Add(d) }

const ms = time.Millisecond

// Turns: "held to an instant, it claims a start, by the instant it first
// asked, and asks again with that instant (Ask.Since)"; "requests held to
// an instant start in the order they first asked". On the paced path (one
// stated quota of requests, no claim standing) too: a request asking again
// claims its turn by its Ask.Since, as the full path (acquireTurn) does.
// It claimed it at now, and a younger waiter slipped ahead of it.
func TestPacedPathKeepsSince(t *testing.T) {
	for _, fast := range []bool{false, true} {
		name := map[bool]string{false: "full path", true: "fast path"}[fast]
		var s State
		cfg := Config{}
		acq := func(at time.Duration, ask Ask) (Lease, Hold, bool) {
			var l Lease
			h, ok := s.acquireAt(instant(rAt(at)), &cfg, &ask, &l, fast)
			return l, h, ok
		}
		pol := []parse.Quota{{Policy: "p", Dialect: "ietf", Limit: 5, Window: 10 * time.Second, Remaining: -1, Reset: -1}}
		// The probe, answered with q=5;w=10s: the ramp opens at 4.
		p, _, ok := acq(0, Ask{})
		if !ok {
			t.Fatal("probe held")
		}
		s.Release(rAt(10*ms), &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: pol})
		// Four more fill the ramp (and the quota: 5 in 10s).
		var out []Lease
		for i := 0; i < 4; i++ {
			l, h, ok := acq(50*ms, Ask{})
			if !ok {
				t.Fatalf("%s: request %d held %+v", name, i, h)
			}
			out = append(out, l)
		}
		// A first asks at 100ms, B at 200ms: held by the ramp (no claim).
		if _, h, ok := acq(100*ms, Ask{Turns: true}); ok || h.Reason != ReasonConcurrency {
			t.Fatalf("%s: A: %v %+v", name, ok, h)
		}
		if _, h, ok := acq(200*ms, Ask{Turns: true}); ok || h.Reason != ReasonConcurrency {
			t.Fatalf("%s: B: %v %+v", name, ok, h)
		}
		// One answer frees the ramp; A asks again, then B: both held by the pace.
		s.Release(rAt(300*ms), &cfg, &out[0], &Outcome{First: true, Bytes: -1, Quotas: pol})
		_, hA, ok := acq(300*ms, Ask{Turns: true, Since: rAt(100 * ms)})
		if ok || hA.Reason != ReasonPace {
			t.Fatalf("%s: A again: %v %+v", name, ok, hA)
		}
		_, _, ok = acq(350*ms, Ask{Turns: true, Since: rAt(200 * ms)})
		if ok {
			t.Fatalf("%s: B again granted", name)
		}
		// At the pace's next start B happens to ask first: A first asked
		// earlier and holds a claim, so B must be held behind it.
		next := hA.Until().Sub(rt0)
		if _, _, ok := acq(next, Ask{Turns: true, Since: rAt(200 * ms)}); ok {
			t.Errorf("%s: B (first asked at 200ms) granted at %v ahead of A (first asked at 100ms); claims %+v", name, next, s.turns.c)
		}
	}
}

// TestTurnsLetGoWithRoom checks that a request younger than the claims
// standing goes when the key has room for twice their requests and its
// own, and is held behind them when it has not. Held behind them whatever
// the room, requests went one claim at a time, each after its claimant
// asked again: over a Store whose calls took up to 10ms, a key of 300 a
// second granted about 115 (TestTurnsKeepPaceOverSlowStore, in package
// polite).
func TestTurnsLetGoWithRoom(t *testing.T) {
	var s State
	cfg := Config{}
	acq := func(at time.Duration, ask Ask) (Lease, Hold, bool) {
		var l Lease
		h, ok := s.Acquire(rAt(at), &cfg, ask, &l)
		return l, h, ok
	}
	pol := []parse.Quota{{Policy: "p", Dialect: "ietf", Limit: 10, Window: 10 * time.Second, Remaining: -1, Reset: -1}}
	// The probe, answered with q=10;w=10s, then nine more, answered at
	// 20ms: the pace's ten starts in 10s.
	p, _, ok := acq(0, Ask{})
	if !ok {
		t.Fatal("probe held")
	}
	s.Release(rAt(10*ms), &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: pol})
	for i := range 9 {
		l, h, ok := acq(20*ms, Ask{})
		if !ok {
			t.Fatalf("request %d held %+v", i, h)
		}
		s.Release(rAt(20*ms), &cfg, &l, &Outcome{First: true, Bytes: -1, Quotas: pol})
	}
	// A and B are held by the pace until the probe's start leaves the
	// window, 10s after it (it counts from its answer, at 10ms), and
	// claim their turns.
	_, h, ok := acq(100*ms, Ask{Turns: true})
	if ok || h.Reason != ReasonPace || !h.Until().Equal(rAt(10*time.Second+10*ms)) {
		t.Fatalf("A: granted %v, held %+v until %v; want held by the pace until 10.01s", ok, h, h.Until().Sub(rt0))
	}
	if _, h, ok := acq(200*ms, Ask{Turns: true}); ok {
		t.Fatalf("B: granted; held %+v", h)
	}
	// At 10.01s the pace has room for one start: A's. C, younger than
	// both claims, is held behind them.
	if _, h, ok := acq(10*time.Second+10*ms, Ask{Turns: true}); ok {
		t.Fatalf("C at 10.01s granted ahead of A and B, with room for one start; claims %+v, held %+v", s.turns.c, h)
	}
	// At 10.03s the nine starts answered at 20ms have left the window
	// too: room for twice A, B and D, who goes before they ask again.
	if r := s.room(instant(rAt(10*time.Second+30*ms)), &cfg); r < 6 {
		t.Fatalf("room at 10.03s: %d starts (ramp %d), want at least 6 for the test", r, s.ramp.cwnd)
	}
	if _, h, ok := acq(10*time.Second+30*ms, Ask{Turns: true}); !ok {
		t.Fatalf("D at 10.03s held %+v behind %d claims, with room for them and it; claims %+v", h, len(s.turns.c), s.turns.c)
	}
	for _, w := range []struct {
		name  string
		since time.Duration
	}{{"A", 100 * ms}, {"B", 200 * ms}} {
		if _, h, ok := acq(10*time.Second+30*ms, Ask{Turns: true, Since: rAt(w.since), Claimed: true}); !ok {
			t.Fatalf("%s, asking again at 10.03s, held %+v", w.name, h)
		}
	}
}

// TestRoomCountsOlderUnclaimed checks that the room a younger request
// goes by leaves some for the older requests that hold no claim: a retry
// held for its own Ask.After, whose place is its first attempt's. When it
// went with room for the claims' requests alone, at a contested instant
// (the pace's next start, room for 3), a request R first asking then took
// a start, the older retry X another, and the claimant B, who first asked
// 9.8s before R, found the pace full and waited a window.
func TestRoomCountsOlderUnclaimed(t *testing.T) {
	var s State
	cfg := Config{}
	pol := []parse.Quota{{Policy: "p", Dialect: "ietf", Limit: 3, Window: 10 * time.Second, Remaining: -1, Reset: -1}}
	acq := func(at time.Duration, ask Ask) (Hold, bool) {
		var l Lease
		h, ok := s.Acquire(rAt(at), &cfg, ask, &l)
		if ok {
			s.Release(rAt(at), &cfg, &l, &Outcome{First: true, Bytes: -1, Quotas: pol})
		}
		return h, ok
	}
	// The probe, answered at 10ms with q=3;w=10s, then two more at 10ms,
	// answered at once: the pace's three starts, all at 10ms. X is one of
	// them (first asked at 10ms); its answer asks for a retry, spaced out
	// until 10.01s: it holds no claim meanwhile.
	var p Lease
	if _, ok := s.Acquire(rAt(0), &cfg, Ask{}, &p); !ok {
		t.Fatal("probe held")
	}
	s.Release(rAt(10*ms), &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: pol})
	for i := range 2 {
		if h, ok := acq(10*ms, Ask{}); !ok {
			t.Fatalf("request %d held %+v", i, h)
		}
	}
	retryX := Ask{Turns: true, First: rAt(10 * ms), After: rAt(10*time.Second + 10*ms), AfterReason: ReasonBackoff}
	if h, ok := acq(20*ms, retryX); ok || h.Claimed() {
		t.Fatalf("X's retry before its After: granted %v, claimed %v", ok, h.Claimed())
	}
	// A (100ms) and B (200ms) are held by the pace until 10.01s and claim.
	for _, at := range []time.Duration{100 * ms, 200 * ms} {
		if h, ok := acq(at, Ask{Turns: true}); ok || !h.Claimed() || !h.Until().Equal(rAt(10*time.Second+10*ms)) {
			t.Fatalf("at %v: granted %v, claimed %v, until %v", at, ok, h.Claimed(), h.Until().Sub(rt0))
		}
	}
	// 10.01s: the three starts leave the window. R, first asking now,
	// asks first; then X's retry, then A and B ask again.
	T := 10*time.Second + 10*ms
	_, rOK := acq(T, Ask{Turns: true})
	x := retryX
	x.Since = time.Time{}
	_, xOK := acq(T, x)
	_, aOK := acq(T, Ask{Turns: true, Since: rAt(100 * ms), Claimed: true})
	hB, bOK := acq(T, Ask{Turns: true, Since: rAt(200 * ms), Claimed: true})
	t.Logf("at 10.01s: R (first asked 10.01s) %v, X (retry, 10ms) %v, A (100ms) %v, B (200ms) %v", rOK, xOK, aOK, bOK)
	if rOK && !bOK {
		t.Fatalf("R, first asking at 10.01s, was granted ahead of B (claimed since 200ms), who was then held %+v until %v", hB.Reason, hB.Until().Sub(rt0))
	}
}
