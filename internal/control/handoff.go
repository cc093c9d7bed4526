package control

import (
	"math"
	"slices"
)

// Handoffs: a slot in flight freed while requests wait for one goes to
// the request that has waited longest.
//
// A request held for a slot in flight (the ramp's window, a limit in
// flight the key learned or a policy states, Config.MaxConcurrency) has no
// instant to claim a turn by (see turn.go): it waits for a change, and the
// first to ask after one takes the slot. That is most often the request
// the answer's own worker sends next, which asks before the requests the
// answer woke have run (under one P, always). Against a limit of four in
// flight, 16 workers and a MaxWait of a minute, under one P, every run
// lost tasks to a wait past MaxWait while the key served the others: 60
// to 73 of 200,000 over 20 runs at 100 ms a request, 1,575 to 1,591 of
// 20,000 at 2 s (TestLimitInFlightTable's last two rows).
//
// So a request held for a slot for starveAfter takes its place in line
// (Ask.Since, or a retry's Ask.First) among those waiting, one place for
// each request (Hold.Placed, which it asks again with: Ask.Placed), of
// which the key keeps the maxWaiting oldest; and each slot that frees
// while a request has a place is handed off: for turnGrace (the time a
// woken waiter takes to run), the slots handed off are the oldest places'
// own, one each. A request whose place is among them takes one; any other
// (one that asks for the first time, a younger one) is held while the
// key's room in flight is no more than the slots handed off. What is
// handed off changes no count in flight and no window: the request that
// takes a slot handed off is granted by the same rules as any, and what
// the key admits is as it was. The places order the requests the answer
// wakes too: handed off to any request that had waited, the slot went to
// the one that began to wait last, which the scheduler runs first, and
// 224 of those 200,000 tasks failed. And one place for each request, not
// for each instant: requests that first asked at one instant (answered
// together, their workers asked together) were handed one slot of the
// several freed at once, and the others went to requests asking for the
// first time.
//
// A request that stops waiting (its context ended, its wait was too
// long) leaves its place (State.Leave), and a slot handed off to it goes
// on to the next place. One that stopped without a word (its process
// died, its Leave dropped) holds a slot turnGrace at most, once: a
// handoff lapses turnGrace after its first slot freed, whatever frees
// since (put off by each, a key whose slots freed more often than that
// handed one to a request gone for as long as it stayed busy), and the
// places it was for are dropped with it, the slot any request's again.
// One that was only slow to run takes its place again, by when it first
// asked, when it is next held.
//
// A slot frees when the key's room in flight grows (see slotRoom): an
// answer that leaves its request in flight while its body arrives
// (Outcome.Keep) frees the ramp's window but no slot of
// Config.MaxConcurrency, which its End frees.
//
// A retry held from the last slot of a held window (see retryHeldFromEdge)
// waits for no slot, but for a first attempt to test it: it gives up its
// place, and a slot handed off to it goes on to the next place.
//
// The places and what is handed off are part of the State (binary tail
// 21), so that the processes sharing a key through a Store hand its slots
// off alike.

// maxWaiting bounds the places of requests held for a slot a key keeps:
// the oldest. A younger request takes its place as the older ones go.
const maxWaiting = 8

// handoff is the key's slots handed off to the requests that waited
// longest for one.
type handoff struct {
	places []int64 // the places in line of the oldest requests held for a slot, one for each, oldest first
	n      int32   // slots handed off to places[:n], not yet taken
	until  int64   // when what is left of n lapses: turnGrace past the first slot of the handoff freed
}

// heldForSlot holds a request that asks at now for ask, for a slot in
// flight; one that has waited starveAfter takes its place among those
// waiting, unless it has one (Ask.Placed), and the hold says whether it
// has (Hold.Placed). Requests that first asked at one instant each have
// a place, so that as many slots are handed off to them.
func (s *State) heldForSlot(now int64, ask *Ask) (Hold, bool) {
	h, _ := s.hold(0, ReasonConcurrency, s.leases.first())
	p := ask.place(now)
	switch {
	case ask.Placed && slices.Contains(s.slots.places, p):
		h.placed = true // kept, however the clock moved since
	case now-p < starveAfter:
	default:
		h.placed = s.slots.take(p)
	}
	return h, false
}

// take gives the place p to a request, after those of its instant, and
// reports whether it is kept: not when maxWaiting older are.
func (h *handoff) take(p int64) bool {
	i := len(h.places)
	for i > 0 && h.places[i-1] > p {
		i--
	}
	switch {
	case len(h.places) < maxWaiting:
		h.places = slices.Insert(h.places, i, p)
	case i < maxWaiting:
		copy(h.places[i+1:], h.places[i:maxWaiting-1]) // the youngest goes
		h.places[i] = p
	default:
		return false
	}
	return true
}

// starveAfter is how long a request waits for a slot in flight before it
// takes its place among those waiting: a refusal floor. One that waited
// less takes the slot it races for, if it wins, as before: the order
// matters only to one that keeps losing. (Not a number of the key's round
// trips: against a server answering in 20 s, four of them are more than
// a MaxWait of a minute.)
const starveAfter = int64(RefusalFloor)

// noPlaces is what roomBefore returns when the key keeps no place: no
// room in flight is so large.
const noPlaces = math.MaxInt64

// roomBefore returns the key's room in flight (see slotRoom), no less
// than 0, before a change that may free slots, for freed; noPlaces when no
// request waits with a place: nothing to hand off.
func (s *State) roomBefore(cfg *Config) int64 {
	if len(s.slots.places) == 0 {
		return noPlaces
	}
	return max(s.slotRoom(cfg, s.leases.n), 0)
}

// freed records, at now, the slots in flight the change since roomBefore
// returned before freed, if it did: an answer that leaves its request in
// flight while its body arrives (Outcome.Keep) frees the ramp's window
// but no slot of Config.MaxConcurrency, and a lease of an earlier
// incarnation of the state frees nothing.
func (s *State) freed(now int64, cfg *Config, before int64) {
	if before == noPlaces {
		return
	}
	if k := s.slotRoom(cfg, s.leases.n) - before; k > 0 {
		s.slotsFreed(now, k)
	}
}

// slotsFreed hands off, at now, k slots freed to the requests that wait
// with a place, up to one each.
func (s *State) slotsFreed(now, k int64) {
	h := &s.slots
	s.lapseHandoff(now)
	if int(h.n) >= len(h.places) {
		return
	}
	if h.n == 0 {
		// The handoff lapses turnGrace from its first slot: one freed
		// later does not put it off (put off by every slot freed, a
		// key whose slots freed more often than that handed one to a
		// request gone for as long as it was busy).
		h.until = addSat(now, turnGrace)
	}
	h.n = int32(min(int64(h.n)+k, int64(len(h.places))))
}

// lapseHandoff ends, at now, a handoff past its time, with the places it
// was for: their requests did not come for it. A clock behind the one
// that handed the slots off, by no more than clockBack (another process's,
// sharing the key through a Store, or a reading taken before the answer's
// and applied after it), sees it lapse turnGrace from now at the latest;
// one further behind (or a handoff ahead of any clock, decoded) ends it,
// as nothing here may hold requests longer.
func (s *State) lapseHandoff(now int64) {
	h := &s.slots
	if h.n == 0 {
		return
	}
	if now < h.until && h.until-now <= turnGrace+int64(clockBack) {
		h.until = min(h.until, addSat(now, turnGrace))
		return // standing
	}
	h.places = slices.Delete(h.places, 0, int(h.n))
	h.n = 0
}

// handedOff returns how many slots in flight are handed off to requests
// other than ask, asking at now: none when its place is among those the
// slots are handed off to.
func (s *State) handedOff(now int64, ask *Ask) int64 {
	h := &s.slots
	s.lapseHandoff(now)
	if h.n == 0 {
		return 0
	}
	if (!ask.Since.IsZero() || !ask.First.IsZero()) && ask.place(now) <= h.places[h.n-1] {
		return 0
	}
	return int64(h.n)
}

// slotGranted records that the request asking at now with ask was
// granted: it waits no more, and a slot handed off to it, or to a request
// younger than it, is counted off, with its place, if it has one.
func (s *State) slotGranted(now int64, ask *Ask) {
	h := &s.slots
	if len(h.places) == 0 || ask.Since.IsZero() && ask.First.IsZero() {
		return
	}
	p := ask.place(now)
	if h.n > 0 && p <= h.places[h.n-1] {
		h.n-- // its own slot, or, when it has no place kept, the youngest place's: that one waits for the next
	}
	if i := slices.Index(h.places, p); ask.Placed && i >= 0 {
		h.places = slices.Delete(h.places, i, i+1)
	}
}

// slotLeft records that a request whose place in line is p, kept, stopped
// waiting for a slot (its context ended, its wait was too long, or it
// waits for what is not a slot): its place is dropped, and a slot handed
// off to it goes on to the next place. It reports whether a slot handed
// off moved on, or ended: the requests held look again.
func (s *State) slotLeft(p int64) bool {
	h := &s.slots
	i := slices.Index(h.places, p)
	if i < 0 {
		return false
	}
	h.places = slices.Delete(h.places, i, i+1)
	if i >= int(h.n) {
		return false
	}
	h.n = min(h.n, int32(len(h.places)))
	return true
}

// slotRoom returns how many more requests the key's limits in flight admit
// now (inflight in flight): the ramp's window, Config.MaxConcurrency and
// the limits in flight its server states; a large number when none binds.
func (s *State) slotRoom(cfg *Config, inflight int64) int64 {
	room := int64(maxWaiting) + 1
	if s.ramp.open && s.ramp.cwnd > 0 {
		room = min(room, int64(s.ramp.cwnd)-s.leases.awaiting())
	}
	if cfg.MaxConcurrency > 0 {
		room = min(room, int64(cfg.MaxConcurrency)-inflight)
	}
	for i := range s.policies {
		if p := &s.policies[i]; p.unit == unitConcurrent && p.q > 0 {
			room = min(room, p.q-inflight)
		}
	}
	return room
}
