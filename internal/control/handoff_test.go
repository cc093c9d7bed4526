package control

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// handoffKey is a key of one slot in flight (MaxConcurrency 1) whose
// requests take turns, driven at fixed instants.
type handoffKey struct {
	t   *testing.T
	s   State
	cfg Config
}

// newHandoffKey returns a key whose probe, at 0, was answered at once.
func newHandoffKey(t *testing.T) *handoffKey {
	k := &handoffKey{t: t, cfg: Config{MaxConcurrency: 1}}
	p := k.grant(0, Ask{})
	k.answer(0, &p)
	return k
}

func (k *handoffKey) grant(at time.Duration, ask Ask) Lease {
	k.t.Helper()
	var l Lease
	if h, ok := k.s.Acquire(rAt(at), &k.cfg, ask, &l); !ok {
		k.t.Fatalf("at %v: %s was held (%v), want granted", at, who(ask), h.Reason)
	}
	return l
}

func (k *handoffKey) held(at time.Duration, ask Ask) Hold {
	k.t.Helper()
	var l Lease
	h, ok := k.s.Acquire(rAt(at), &k.cfg, ask, &l)
	if ok {
		k.t.Fatalf("at %v: %s was granted, want held for a slot", at, who(ask))
	}
	if h.Reason != ReasonConcurrency || !h.Until().IsZero() {
		k.t.Fatalf("at %v: held for %v until %v, want a slot in flight", at, h.Reason, h.Until())
	}
	return h
}

func (k *handoffKey) answer(at time.Duration, l *Lease) {
	k.s.Release(rAt(at), &k.cfg, l, &Outcome{First: true, Bytes: -1})
}

// who names the request that asks with ask.
func who(ask Ask) string {
	if ask.Since.IsZero() {
		return "a request asking for the first time"
	}
	return "the request held since " + ask.Since.Sub(rt0).String()
}

// waited is the Ask of a request held since, asking again, with its
// place among those waiting for a slot if it has one (Ask.Placed: its
// place is taken again if not kept).
func waited(since time.Duration) Ask { return Ask{Turns: true, Since: rAt(since), Placed: true} }

// A request held for a slot in flight whose slot each answer's own
// worker takes first (it asks before the requests the answer woke run)
// takes its place once it has waited starveAfter; the next slot freed is
// handed off to it, and the worker's next request waits behind it.
func TestHandoffToTheRequestHeldLongest(t *testing.T) {
	k := newHandoffKey(t)
	ms := time.Millisecond
	fresh := Ask{Turns: true}
	a := k.grant(0, fresh)
	k.held(0, fresh) // w: held since 0
	at := time.Duration(0)
	for at < time.Second {
		at += 100 * ms
		k.answer(at, &a)
		a = k.grant(at, fresh) // the worker takes the slot first
		k.held(at, waited(0))  // w, woken, finds it taken
	}
	if len(k.s.slots.places) != 1 || k.s.slots.places[0] != instant(rt0) {
		t.Fatalf("after %v held, the places kept are %v, want w's", at, k.s.slots.places)
	}
	at += 100 * ms
	k.answer(at, &a)
	h := k.held(at, fresh) // the worker's next request waits behind w
	if w := h.Wake(); w.IsZero() || w.After(rAt(at+time.Duration(turnGrace))) {
		t.Errorf("the request held behind the slot handed off looks again at %v, want by the handoff's lapse %v", w.Sub(rt0), at+time.Duration(turnGrace))
	}
	a = k.grant(at, waited(0)) // w takes its slot
	if k.s.slots.n != 0 || len(k.s.slots.places) != 0 {
		t.Errorf("after w's grant: %d handed off, places %v; want none", k.s.slots.n, k.s.slots.places)
	}
	// Nothing handed off: the next answer's worker takes the slot at once.
	at += 100 * ms
	k.answer(at, &a)
	k.grant(at, fresh)
}

// Of two requests that have waited, the slot goes to the older; the
// younger, asking first, waits behind it.
func TestHandoffToTheOlder(t *testing.T) {
	k := newHandoffKey(t)
	ms := time.Millisecond
	a := k.grant(0, Ask{Turns: true})
	k.held(1100*ms, waited(0))      // older: held since 0
	k.held(1100*ms, waited(50*ms))  // younger: held since 50ms
	k.answer(1200*ms, &a)           // hands the slot off to the older
	k.held(1200*ms, waited(50*ms))  // the younger asks first, and waits
	a = k.grant(1200*ms, waited(0)) // the older takes it
	k.held(1200*ms, waited(50*ms))
	k.answer(1300*ms, &a) // now the younger's turn
	k.held(1300*ms, Ask{Turns: true})
	k.grant(1300*ms, waited(50*ms))
}

// A slot handed off to a request that stopped waiting without a word
// (its context ended, its process died) is any request's again turnGrace
// after it freed, and the place is dropped: it holds others once.
func TestHandoffLapses(t *testing.T) {
	k := newHandoffKey(t)
	ms := time.Millisecond
	a := k.grant(0, Ask{Turns: true})
	k.held(1100*ms, waited(0)) // then gone
	k.answer(1200*ms, &a)
	k.held(1200*ms, Ask{Turns: true})
	lapse := 1200*ms + time.Duration(turnGrace)
	k.held(lapse-ms, Ask{Turns: true})
	a = k.grant(lapse, Ask{Turns: true})
	if k.s.slots.n != 0 || len(k.s.slots.places) != 0 {
		t.Errorf("after the lapse: %d handed off, places %v; want none", k.s.slots.n, k.s.slots.places)
	}
	k.answer(lapse+100*ms, &a)
	k.grant(lapse+100*ms, Ask{Turns: true})
}

// A key keeps the places of the maxWaiting oldest requests held for a
// slot, each once, oldest first.
func TestHandoffPlacesBounded(t *testing.T) {
	k := newHandoffKey(t)
	ms := time.Millisecond
	k.grant(0, Ask{Turns: true})
	at := 2 * time.Second
	for i := maxWaiting + 3; i > 0; i-- { // youngest first
		k.held(at, waited(time.Duration(i)*ms))
		k.held(at, waited(time.Duration(i)*ms)) // again: counted once
	}
	p := k.s.slots.places
	if len(p) != maxWaiting || p[0] != instant(rAt(ms)) || p[maxWaiting-1] != instant(rAt(maxWaiting*ms)) {
		t.Errorf("places %v, want the %d oldest, 1ms to %dms", p, maxWaiting, maxWaiting)
	}
}

func TestHandoffTail(t *testing.T) {
	k := newHandoffKey(t)
	ms := time.Millisecond
	a := k.grant(0, Ask{Turns: true})
	plain, _ := k.s.MarshalBinary()
	k.held(1100*ms, waited(0))
	k.held(1100*ms, waited(30*ms))
	k.held(1100*ms, Ask{Turns: true, Since: rAt(30 * ms)}) // another of its instant
	k.answer(1200*ms, &a)
	b, err := k.s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(back.slots, k.s.slots) {
		t.Fatalf("slots %+v read back as %+v (%v)", k.s.slots, back.slots, err)
	}
	tail := func(places []int64, n uint64, until int64) []byte {
		e := encoder{base: k.s.born, b: append(bytes.Clone(plain), tailSlots)}
		e.uint(uint64(len(places)))
		for _, p := range places {
			e.at(p)
		}
		e.uint(n)
		e.at(until)
		return e.b
	}
	p0, p1 := instant(rt0), instant(rAt(30*ms))
	if err := new(State).UnmarshalBinary(tail([]int64{p0, p0}, 2, p1)); err != nil {
		t.Errorf("two places of one instant, handed off, not read back: %v", err)
	}
	for name, bad := range map[string][]byte{
		"never written":         tail(nil, 0, 0),
		"out of order":          tail([]int64{p1, p0}, 0, 0),
		"more handed off":       tail([]int64{p0}, 2, p1),
		"handed off, no lapse":  tail([]int64{p0}, 1, 0),
		"more than maxWaiting":  tail(make([]int64, maxWaiting+1), 0, 0),
		"a place of no instant": tail([]int64{0}, 0, 0),
	} {
		if err := new(State).UnmarshalBinary(bad); err == nil {
			t.Errorf("%s: read back", name)
		}
	}
}

// A handoff lapses turnGrace after its first slot: slots freed more often
// than that do not put it off, so that a request gone holds a slot once,
// not for as long as the key stays busy. Two slots, one freed every 20 ms;
// S takes its place and is gone without a word; between frees a request
// that has waited a second is held.
func TestHandoffLapseNotPutOff(t *testing.T) {
	k := twoSlotKey(t)
	ms := time.Millisecond
	const s0 = time.Second // S first asked then
	inflight := []Lease{k.grant(s0, Ask{Turns: true}), k.grant(s0, Ask{Turns: true})}
	k.held(s0, Ask{Turns: true})
	k.held(s0+1100*ms, waited(s0)) // S takes its place, then is gone
	empty := 0
	var queue []time.Duration // places of requests held a second, oldest first
	try := func(at time.Duration, ask Ask) bool {
		var l Lease
		_, ok := k.s.Acquire(rAt(at), &k.cfg, ask, &l)
		if ok {
			inflight = append(inflight, l)
		}
		return ok
	}
	for at := s0 + 1200*ms; at < s0+4200*ms; at += 20 * ms {
		k.answer(at, &inflight[0])
		inflight = inflight[1:]
		for len(queue) > 0 && try(at, waited(queue[0])) {
			queue = queue[1:]
		}
		try(at, Ask{Turns: true}) // the answer's worker's next request
		if since := at - 1050*ms; !try(at, waited(since)) {
			queue = append(queue, since)
		}
		if len(inflight) < 2 {
			empty++
		}
	}
	if empty > 5 {
		t.Errorf("%d of 150 slots freed stayed empty: the slot handed off to S, gone, was held past its lapse", empty)
	}
	if slices.Contains(k.s.slots.places, instant(rAt(s0))) {
		t.Errorf("S's place is kept after 3 s of frees: %v", k.s.slots.places)
	}
}

// A request that stops waiting leaves its place, and a slot handed off to
// it goes on to the next place.
func TestHandoffLeave(t *testing.T) {
	k := newHandoffKey(t)
	ms := time.Millisecond
	a := k.grant(0, Ask{Turns: true})
	k.held(1100*ms, waited(0))
	k.held(1100*ms, waited(10*ms))
	k.answer(1200*ms, &a) // handed off to the one held since 0
	gen := k.s.Generation()
	k.s.Leave(rAt(0), false, true) // it gave up
	if k.s.Generation() == gen {
		t.Errorf("the slot handed off to the request that left went on with no change for those held to look")
	}
	k.held(1200*ms, Ask{Turns: true})
	k.grant(1200*ms, waited(10*ms))
	if len(k.s.slots.places) != 0 || k.s.slots.n != 0 {
		t.Errorf("places %v, %d handed off; want none", k.s.slots.places, k.s.slots.n)
	}
}

// A retry held from the last slot of a held window waits for a first
// attempt to test it, not for a slot: it leaves its place, and a slot
// handed off to it goes on to the next place, not to whoever asks first,
// nor is one handed off to another counted off by it.
func TestHandoffEdgeRetryPassesOn(t *testing.T) {
	k := &handoffKey{t: t}
	p := k.grant(0, Ask{})
	k.answer(0, &p)
	ms := time.Millisecond
	k.s.ramp.cwnd, k.s.ramp.capped = 3, true
	k.s.shed.ok, k.s.shed.most = shedRun, 1
	a := k.grant(0, Ask{Turns: true})
	b := k.grant(0, Ask{Turns: true})
	k.grant(0, Ask{Turns: true})
	retry := Ask{Turns: true, First: rAt(0), Since: rAt(0), After: rAt(1050 * ms), AfterReason: ReasonBackoff, Placed: true}
	k.held(1100*ms, retry)         // R, held for the window: its place is 0
	k.held(1100*ms, waited(10*ms)) // B, held since 10 ms
	k.answer(1200*ms, &a)          // handed off to R
	k.held(1200*ms, retry)         // R, held from the edge: passes it on to B
	k.held(1200*ms, Ask{Turns: true})
	b2 := k.grant(1200*ms, waited(10*ms))
	k.held(1210*ms, waited(20*ms)) // C, held since 20 ms
	k.answer(1220*ms, &b)          // handed off to C
	k.held(1220*ms, retry)         // R asks first: C's slot stays C's
	k.held(1220*ms, Ask{Turns: true})
	k.grant(1220*ms, waited(20*ms))
	_ = b2
}

// An answer whose body still arrives (Outcome.Keep) frees the ramp's
// window but no slot of MaxConcurrency: nothing is handed off until its
// End, which hands off one.
func TestHandoffKeepHandsOffAtEnd(t *testing.T) {
	k := newHandoffKey(t)
	ms := time.Millisecond
	x := k.grant(0, Ask{Turns: true})
	k.held(1100*ms, waited(0))
	k.held(1100*ms, waited(50*ms))
	k.s.Release(rAt(1200*ms), &k.cfg, &x, &Outcome{First: true, Bytes: -1, Keep: true})
	if k.s.slots.n != 0 {
		t.Errorf("an answer kept in flight handed off %d slots; want none", k.s.slots.n)
	}
	k.held(1200*ms, waited(0))
	k.held(1200*ms, waited(50*ms))
	k.s.End(rAt(1220*ms), &k.cfg, &x)
	if k.s.slots.n != 1 {
		t.Errorf("the End handed off %d slots; want 1", k.s.slots.n)
	}
	k.held(1220*ms, waited(50*ms))
	k.grant(1220*ms, waited(0))
}

// A clock a few milliseconds behind the one that handed a slot off (of
// another process sharing the key through a Store, or a reading taken
// before the answer's and applied after it) keeps the handoff.
func TestHandoffClockBehind(t *testing.T) {
	k := newHandoffKey(t)
	ms := time.Millisecond
	a := k.grant(0, Ask{Turns: true})
	k.held(1100*ms, waited(0))
	k.answer(1200*ms, &a)
	k.held(1196*ms, Ask{Turns: true, Shared: true})
	k.grant(1196*ms, waited(0))
}

// twoSlotKey returns a key of MaxConcurrency 2 whose ramp admits 2.
func twoSlotKey(t *testing.T) *handoffKey {
	k := &handoffKey{t: t, cfg: Config{MaxConcurrency: 2}}
	ms := time.Millisecond
	for at := time.Duration(0); at < 990*ms; at += 10 * ms {
		var ls []Lease
		for range 2 {
			var l Lease
			if _, ok := k.s.Acquire(rAt(at), &k.cfg, Ask{}, &l); ok {
				ls = append(ls, l)
			}
		}
		for i := range ls {
			k.answer(at+5*ms, &ls[i])
		}
	}
	return k
}

// Two slots freed at one instant, before the requests the first woke have
// run, are handed off to the two oldest places, not one.
func TestHandoffBackToBackFrees(t *testing.T) {
	k := twoSlotKey(t)
	ms := time.Millisecond
	const s0 = time.Second
	x := k.grant(s0, Ask{Turns: true})
	y := k.grant(s0, Ask{Turns: true})
	k.held(s0+1100*ms, waited(s0))
	k.held(s0+1100*ms, waited(s0+10*ms))
	k.answer(s0+1200*ms, &x)
	k.answer(s0+1200*ms, &y)
	k.held(s0+1200*ms, Ask{Turns: true})
	k.grant(s0+1200*ms, waited(s0+10*ms))
	k.grant(s0+1200*ms, waited(s0))
}

// Requests that first asked at one instant each have a place: as many
// slots are handed off to them.
func TestHandoffPlacesOfOneInstant(t *testing.T) {
	k := twoSlotKey(t)
	ms := time.Millisecond
	const s0 = time.Second
	x := k.grant(s0, Ask{Turns: true})
	y := k.grant(s0, Ask{Turns: true})
	first := Ask{Turns: true, Since: rAt(s0)} // two requests, each asking for a place
	h1 := k.held(s0+1100*ms, first)
	h2 := k.held(s0+1100*ms, first)
	if !h1.Placed() || !h2.Placed() || len(k.s.slots.places) != 2 {
		t.Fatalf("placed %v, %v; places %v; want two", h1.Placed(), h2.Placed(), k.s.slots.places)
	}
	k.answer(s0+1200*ms, &x)
	k.answer(s0+1200*ms, &y)
	k.held(s0+1200*ms, Ask{Turns: true})
	k.grant(s0+1200*ms, waited(s0))
	k.grant(s0+1200*ms, waited(s0))
}

// A leave that ends a handoff (the place it went to was the last) moves
// the generation: the requests held behind it look again at once, not at
// its lapse.
func TestHandoffLeaveEndingWakes(t *testing.T) {
	k := newHandoffKey(t)
	ms := time.Millisecond
	a := k.grant(0, Ask{Turns: true})
	k.held(1100*ms, waited(0))
	k.answer(1200*ms, &a)
	k.held(1200*ms, Ask{Turns: true})
	gen := k.s.Generation()
	k.s.Leave(rAt(0), false, true)
	if k.s.Generation() == gen {
		t.Errorf("the handoff ended with the leave, and the generation did not move")
	}
	k.grant(1200*ms, Ask{Turns: true})
}

// A handoff seen from a clock far behind the one that made it (a Store's
// peer, up to clockBack behind) holds a request turnGrace at most.
func TestHandoffClockFarBehind(t *testing.T) {
	k := newHandoffKey(t)
	ms := time.Millisecond
	a := k.grant(0, Ask{Turns: true})
	k.held(1100*ms, waited(0))
	k.answer(1200*ms, &a)
	h := k.held(300*ms, Ask{Turns: true, Shared: true})
	if d := h.Wake().Sub(rAt(300 * ms)); d > time.Duration(turnGrace) {
		t.Errorf("a request on a clock 900 ms behind is held %v behind a handoff; want turnGrace at most", d)
	}
}

// A window cut below the requests in flight (room -1) that an answer grows
// by one past them (room 1) frees a slot: it is handed off.
func TestHandoffFromRoomBelowZero(t *testing.T) {
	k := &handoffKey{t: t}
	p := k.grant(0, Ask{})
	k.answer(0, &p)
	ms := time.Millisecond
	k.s.ramp.cwnd = 3
	x := k.grant(0, Ask{Turns: true})
	k.grant(0, Ask{Turns: true})
	k.grant(0, Ask{Turns: true})
	k.held(1100*ms, waited(0))
	k.s.ramp.cwnd = 2 // as a refusal's cut leaves it
	k.answer(1200*ms, &x)
	if room := k.s.slotRoom(&k.cfg, k.s.leases.n); room < 1 {
		t.Fatalf("room %d after the answer; the test needs a slot freed", room)
	}
	k.held(1200*ms, Ask{Turns: true})
	k.grant(1200*ms, waited(0))
}

// Random requests, answers (some kept in flight while their bodies
// arrive), ends, leaves, a clock that steps back a little, and round
// trips through the binary form: the handoff stays well formed (places in
// order, no more than maxWaiting, no more handed off than places), and
// every state written reads back.
func TestHandoffRandomWellFormed(t *testing.T) {
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 1))
		k := twoSlotKey(t)
		k.cfg.MaxConcurrency = 1 + r.IntN(3)
		var leases []Lease
		var held []Ask
		at := time.Second
		for step := range 2000 {
			at += time.Duration(r.IntN(40)) * time.Millisecond
			now := at - time.Duration(r.IntN(20))*time.Millisecond
			switch op := r.IntN(10); {
			case op < 5:
				ask := Ask{Turns: true}
				i := -1
				if len(held) > 0 && r.IntN(3) > 0 {
					i = r.IntN(len(held))
					ask = held[i]
				}
				var l Lease
				h, ok := k.s.Acquire(rAt(now), &k.cfg, ask, &l)
				switch {
				case ok:
					leases = append(leases, l)
					if i >= 0 {
						held = slices.Delete(held, i, i+1)
					}
				case i >= 0:
					held[i].Placed = h.Placed()
				default:
					held = append(held, Ask{Turns: true, Since: rAt(now), Placed: h.Placed()})
				}
			case op < 7 && len(leases) > 0:
				i := r.IntN(len(leases))
				keep := r.IntN(4) == 0
				k.s.Release(rAt(now), &k.cfg, &leases[i], &Outcome{First: true, Bytes: -1, Keep: keep})
				if keep {
					k.s.End(rAt(now), &k.cfg, &leases[i])
				}
				leases = slices.Delete(leases, i, i+1)
			case op < 8 && len(held) > 0 || len(held) > 30:
				i := r.IntN(len(held))
				k.s.Leave(held[i].Since, r.IntN(2) == 0, held[i].Placed)
				held = slices.Delete(held, i, i+1)
			case op < 9:
				b, err := k.s.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				var back State
				if err := back.UnmarshalBinary(b); err != nil {
					t.Fatalf("seed %d step %d: %v (slots %+v)", seed, step, err, k.s.slots)
				}
				k.s = back
			}
			if h := &k.s.slots; h.n < 0 || int(h.n) > len(h.places) || len(h.places) > maxWaiting || !slices.IsSorted(h.places) {
				t.Fatalf("seed %d step %d: %+v", seed, step, *h)
			}
		}
	}
}

// A request with a place asking again on a clock stepped back (less than
// clockBack, which bounds the state anew) keeps its place, and takes no
// second one once its clock is past a refusal floor again.
func TestHandoffPlaceKeptClockBack(t *testing.T) {
	k := newHandoffKey(t)
	ms := time.Millisecond
	a := k.grant(0, Ask{Turns: true})
	w := waited(0)
	w.Placed = k.held(1100*ms, w).Placed()
	if w.Placed = k.held(950*ms, w).Placed(); !w.Placed {
		t.Errorf("at a clock stepped back to 950ms, the hold says the request has no place; places %v", k.s.slots.places)
	}
	k.held(1150*ms, w)
	if len(k.s.slots.places) != 1 {
		t.Errorf("places %v; want the request's one", k.s.slots.places)
	}
	k.answer(1200*ms, &a)
	k.grant(1200*ms, w)
	if len(k.s.slots.places) != 0 {
		t.Errorf("places %v after its grant; want none", k.s.slots.places)
	}
}
