package control

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
// of 200,000 over 20 runs at 100 ms a request, 1,575 of 20,000 at 2 s.
//
// So a request held for a slot for starveAfter takes its place in line
// (Ask.Since, or a retry's Ask.First) among those waiting, of which the
// key keeps the maxWaiting oldest; and an answer that frees a slot while
// one is held hands it off: for turnGrace (the time a woken waiter takes
// to run), the slots handed off are the oldest places' own. A request
// whose place is among them takes one; any other (one that asks for the
// first time, a younger one) is held while the key's room in flight is no
// more than the slots handed off. What is handed off changes no count in
// flight and no window: the request that takes a slot handed off is
// granted by the same rules as any, and what the key admits is as it was.
// The places order the requests the answer wakes too: handed off to any
// request that had waited, the slot went to the one that began to wait
// last, which the scheduler runs first, and 224 of those 200,000 tasks
// failed.
//
// A handoff lapses turnGrace after the last slot freed: the requests it
// was for may have stopped waiting without a word (their contexts ended,
// their process died). Their places are dropped with it, and the slot is
// any request's again: a request gone holds a slot turnGrace at most,
// once. One that was only slow to run takes its place again, by when it
// first asked, when it is next held.
//
// A retry held from the last slot of a held window (see retryHeldFromEdge)
// waits for no slot, but for a first attempt to test it: it takes no place
// among those waiting, gives up the one it had, and a slot handed off to
// it goes on to the others.
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
	places []int64 // the places in line of the oldest requests held for a slot, oldest first, each once
	n      int32   // slots handed off to places[:n], not yet taken
	until  int64   // when what is left of n lapses: turnGrace past the last slot freed
	waited bool    // a request was held for a slot since the last slot freed
}

// heldForSlot holds a request that asks at now for ask, for a slot in
// flight, and takes its place among those waiting.
func (s *State) heldForSlot(now int64, ask *Ask) (Hold, bool) {
	h := &s.slots
	p := ask.place(now)
	if now-p < starveAfter {
		return s.hold(0, ReasonConcurrency, s.leases.first())
	}
	h.waited = true
	i := 0
	for i < len(h.places) && h.places[i] < p {
		i++
	}
	switch {
	case i < len(h.places) && h.places[i] == p:
	case len(h.places) < maxWaiting:
		h.places = append(h.places, 0)
		copy(h.places[i+1:], h.places[i:])
		h.places[i] = p
	case i < maxWaiting:
		copy(h.places[i+1:], h.places[i:maxWaiting-1]) // the youngest goes
		h.places[i] = p
	}
	return s.hold(0, ReasonConcurrency, s.leases.first())
}

// starveAfter is how long a request waits for a slot in flight before it
// takes its place among those waiting: a refusal floor. One that waited
// less takes the slot it races for, if it wins, as before: the order
// matters only to one that keeps losing. (Not a number of the key's round
// trips: against a server answering in 20 s, four of them are more than
// a MaxWait of a minute.)
const starveAfter = int64(RefusalFloor)

// slotFreed records, at now, that a slot in flight may have freed (a
// request answered or ended, leases expired): it is handed off if a
// request was held for one since the last.
func (s *State) slotFreed(now int64) {
	h := &s.slots
	s.lapseHandoff(now)
	if !h.waited || len(h.places) == 0 {
		return
	}
	h.waited = false
	if int(h.n) < len(h.places) {
		h.n++
	}
	h.until = addSat(now, turnGrace)
}

// lapseHandoff ends, at now, a handoff past its time, with the places it
// was for: their requests did not come for it.
func (s *State) lapseHandoff(now int64) {
	h := &s.slots
	if h.n == 0 || now < h.until && now >= h.until-turnGrace {
		return // none, or standing (unless the clock went back past it)
	}
	n := copy(h.places, h.places[h.n:])
	clear(h.places[n:])
	h.places, h.n = h.places[:n], 0
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

// slotTaken records that the request asking at now with ask no longer
// waits for a slot (granted, or held for what is not a slot): its place,
// if kept, is dropped, and a slot handed off to it counted off. It
// reports whether a slot handed off was.
func (s *State) slotTaken(now int64, ask *Ask) bool {
	h := &s.slots
	if len(h.places) == 0 || ask.Since.IsZero() && ask.First.IsZero() {
		return false
	}
	p, passed := ask.place(now), false
	if h.n > 0 && p <= h.places[h.n-1] {
		h.n--
		passed = true
	}
	for i, q := range h.places {
		if q == p {
			h.places = append(h.places[:i], h.places[i+1:]...)
			break
		}
	}
	return passed
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
