package control

import (
	"bytes"
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

// waited is the Ask of a request held since, asking again.
func waited(since time.Duration) Ask { return Ask{Turns: true, Since: rAt(since)} }

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
	k.answer(1200*ms, &a)
	b, err := k.s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil || back.slots.n != 1 || back.slots.until != k.s.slots.until || len(back.slots.places) != 2 {
		t.Fatalf("slots %+v read back as %+v (%v)", k.s.slots, back.slots, err)
	}
	tail := func(places []int64, n uint64, until int64, waited bool) []byte {
		e := encoder{base: k.s.born, b: append(bytes.Clone(plain), tailSlots)}
		e.uint(uint64(len(places)))
		for _, p := range places {
			e.at(p)
		}
		e.uint(n)
		e.at(until)
		e.bool(waited)
		return e.b
	}
	p0, p1 := instant(rt0), instant(rAt(30*ms))
	if err := new(State).UnmarshalBinary(tail(nil, 0, 0, true)); err != nil {
		t.Errorf("a request held for a slot whose place was dropped was not read back: %v", err)
	}
	for name, bad := range map[string][]byte{
		"never written":         tail(nil, 0, 0, false),
		"out of order":          tail([]int64{p1, p0}, 0, 0, true),
		"twice":                 tail([]int64{p0, p0}, 0, 0, true),
		"more handed off":       tail([]int64{p0}, 2, p1, true),
		"handed off, no lapse":  tail([]int64{p0}, 1, 0, false),
		"more than maxWaiting":  tail(make([]int64, maxWaiting+1), 0, 0, true),
		"a place of no instant": tail([]int64{0}, 0, 0, true),
	} {
		if err := new(State).UnmarshalBinary(bad); err == nil {
			t.Errorf("%s: read back", name)
		}
	}
}
