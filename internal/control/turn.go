package control

import "time"

// Turns: requests held to an instant start in the order they first asked.
//
// Every request a key holds sleeps until its hold may end and asks again;
// those held to the same instant (a pace's next start, a window's reset,
// a pause's end) wake together, and the first to ask takes the slot. A
// request that just arrived (a worker whose last request was answered
// asks at once) or a woken one the scheduler runs late can lose that race
// again and again: in the scenario table, with 16 workers, one task of
// 200 waited four windows of a fixed window 20/4s while most waited one.
// So a request that takes turns (Ask.Turns) and is held to an instant
// claims a turn, by the instant it first asked the key (then, asking
// again, it says when: Ask.Since; a retry's first attempt's, Ask.First);
// a request younger than the oldest claim standing is held, for that
// claim's reason, until the claim's requests may go (then until the claim
// ends), and takes its own place behind it, unless the key has room for
// twice the claims' requests and its own (see turnHold). The key keeps
// the maxTurns oldest claims, one for the requests that first asked at
// one instant (they race among themselves, as before). A claim ends
//
//   - when its last request is granted (the key's generation moves on, so
//     that the requests held behind it look again at once);
//   - turnGrace after the instant its hold ended: a claimant that gave up
//     without saying so, or whose process died, delays the others that
//     much at most;
//   - at Leave, when its last request stops waiting (the Transport says
//     so when its context ends or its wait is too long);
//   - when maxTurns older claims stand: the youngest is dropped, and its
//     requests wait as before, though still behind the others.
//
// A request that does not take turns claims nothing. Nor does a request
// held for what is its own (its Ask.After, its cost), so that its wait
// does not become everyone's (one held for its cost as long as its quota
// takes to be whole again, or a retry held for its cost or for the
// tokens its refusal said it lacked, claims a turn of the requests that
// cost: see admitCost and acquireTurn), or held until the key changes (an answer, a
// slot in flight): such a hold has no instant at which the others could go
// without it, and holding them behind it until a change let the requests
// woken by it all go at once (against a server whose headers overstate
// its quota 5000 times, up to 35 of 200 were then refused, against 11
// without). Such requests are still held behind another's claim. The
// claims are part of the State (binary tail 9), so that every process
// sharing a key through a Store keeps the same order.

// turnGrace is how long a claimant has, once its hold ended, to ask again
// before its claim lapses: the time a woken waiter takes to run.
const turnGrace = int64(50 * time.Millisecond)

// maxTurns bounds the claims a key keeps; maxClaim the requests one
// claim counts.
const (
	maxTurns = 32
	maxClaim = 1 << 20
)

// claim is the turn of the requests held that first asked at one instant.
type claim struct {
	since  int64  // when its requests first asked: their place in line
	n      int32  // how many requests it stands for
	until  int64  // when it lapses: turnGrace after their hold's end
	reason Reason // why they are held
	cost   bool   // held for their cost: the claim holds only requests that cost (see admitCost)
}

// turns are the key's claims, oldest first.
type turns struct {
	c    []claim
	held bool // a request was held behind a claim since one last ended
}

// beyond reports whether a claim lapses after far.
func (t *turns) beyond(far int64) bool {
	for _, c := range t.c {
		if c.until > far {
			return true
		}
	}
	return false
}

// bound brings back to far the claims that lapse after it, and drops
// those made after it: as a state decoded from a store may hold, written
// by a hostile or broken process.
func (t *turns) bound(far int64) {
	n := 0
	for _, c := range t.c {
		if c.since <= far {
			c.until = min(c.until, far)
			t.c[n] = c
			n++
		}
	}
	clear(t.c[n:])
	t.c = t.c[:n]
}

// lapse drops the claims that have ended by now.
func (t *turns) lapse(now int64) {
	n := 0
	for _, c := range t.c {
		if now < c.until {
			t.c[n] = c
			n++
		}
	}
	clear(t.c[n:])
	t.c = t.c[:n]
}

// turnHold holds a request that first asked at since, asking at now,
// when an older request's claim stands; a claim for a cost holds it only
// if it is priced (costs something in a unit other than requests). It
// lets the request go when the key has room, by its own rules, for twice
// the requests of the older claims and this one (see room): then it takes
// no start they wait for, nor one that older requests holding no claim
// wait for (a retry held for its own Ask.After, whose place is its first
// attempt's; a request held for a slot), whose number the key does not
// keep, as long as they are no more than those that claim. (Holding it
// anyway granted the claims one after another, each after its claimant
// asked again: over a Store whose calls took up to 10ms, a key of 300 a
// second granted about 115. With room for the claims' requests alone,
// such a retry took a start the youngest claimant waited for, which then
// waited a window: TestRoomCountsOlderUnclaimed.)
func (s *State) turnHold(now, since int64, priced bool, cfg *Config) (Hold, bool) {
	t := &s.turns
	t.lapse(now)
	var ahead, room int64
	for i := range t.c {
		c := &t.c[i]
		if since <= c.since {
			break
		}
		if c.cost && !priced {
			continue
		}
		if ahead == 0 {
			room = s.room(now, cfg)
		}
		if ahead += int64(c.n); 2*(ahead+1) <= room {
			continue
		}
		t.held = true
		// Held until the claim's own requests may go, not until it
		// lapses, so that its own claim, turnGrace after its hold,
		// lapses with the older one: held until the older claim lapsed,
		// each request behind it claimed turnGrace more than the one it
		// was held behind, and the claims ran ahead of every hold a
		// rule gave, turnGrace a layer (see TestClaimsNeverRunAhead).
		// Once those requests may go, it waits for them to, until the
		// claim lapses.
		until := c.until - turnGrace
		if until <= now {
			until = c.until
		}
		h, _ := s.hold(until, c.reason, 0)
		h.cost = c.cost // its own claim, behind, holds only requests that cost too
		return h, true
	}
	return Hold{}, false
}

// room returns how many requests the key could start at now, as far as
// its rules tell at a glance: on the paced path (see paced), with no cost
// quota and no sliding-window counter, the least of the requests the live
// observation leaves beyond those awaiting their answer (less the last,
// which the full path tests), the starts the pace allows within its
// window, and the ramp's room; 0 elsewhere.
func (s *State) room(now int64, cfg *Config) int64 {
	p := s.paced(now, cfg)
	if p == nil || p.sliding || len(s.costs.quotas) > 0 {
		return 0
	}
	counted := s.leases.awaiting()
	room := int64(maxClaim) * maxTurns
	if p.live {
		room = min(room, p.minR-counted-1)
	}
	if s.ramp.cwnd > 0 {
		room = min(room, int64(s.ramp.cwnd)-counted)
	}
	if p.paces() {
		q, w := p.pace()
		room = min(room, q-p.log.within(now, w))
	}
	return max(room, 0)
}

// has reports whether a claim of the requests that first asked at since
// stands.
func (t *turns) has(since int64) bool {
	for _, c := range t.c {
		if c.since == since {
			return true
		}
	}
	return false
}

// turnTaken records the answer to a request that first asked at since,
// counted in that instant's claim if again (it claimed before): granted
// (ok), or held by h, whose claimed it sets.
func (s *State) turnTaken(since int64, again bool, h *Hold, ok bool) {
	t := &s.turns
	i := 0
	for i < len(t.c) && t.c[i].since < since {
		i++
	}
	found := i < len(t.c) && t.c[i].since == since
	switch {
	case ok:
		if again && found {
			s.unclaim(i)
		}
	case h.own || h.Never || h.until == 0:
		h.claimed = again && found
	default:
		h.claimed = found || i < maxTurns
		// Never before since: a clock gone back less than a second
		// (see clockBack) may hold the request until before it first
		// asked, and a claim that lapses before it begins is one no
		// state decodes.
		c := claim{since: since, n: 1, until: max(addSat(h.until, turnGrace), since), reason: h.Reason, cost: h.cost}
		switch {
		case found:
			c.n = t.c[i].n
			// The hold asked for last decides, as for the claim's end and
			// reason: a request held for its cost after a pause ended
			// left its claim holding every request until its cost had
			// room (a GET 10 s). Another request of the instant held by
			// the pause, or a pace, still holds the others by itself.
			if !again {
				c.n = min(c.n+1, maxClaim) // one more request that first asked then
			}
			t.c[i] = c
		case i < maxTurns:
			if len(t.c) == maxTurns {
				t.c = t.c[:maxTurns-1] // the youngest is dropped
			}
			t.c = append(t.c, claim{})
			copy(t.c[i+1:], t.c[i:])
			t.c[i] = c
		}
	}
}

// unclaim counts one request fewer for the claim t.c[i], which ends with
// its last: the requests held behind it look again.
func (s *State) unclaim(i int) {
	t := &s.turns
	if t.c[i].n--; t.c[i].n > 0 {
		return
	}
	t.c = append(t.c[:i], t.c[i+1:]...)
	if t.held {
		s.gen++
		t.held = false
	}
}

// Leave records that a request that first asked at since stopped waiting
// (its context ended, or its wait was too long): when placed (it has a
// place among those waiting for a slot in flight: Hold.Placed), the place
// goes (see handoff.go); when claimed (it was counted in the claim of its
// place: Hold.Claimed), its claim counts it no more, and ends with its
// last request.
func (s *State) Leave(since time.Time, claimed, placed bool) {
	n := instant(since)
	if placed && s.slotLeft(n) {
		s.gen++ // the slot handed off to it goes on: the requests held look again
	}
	if !claimed {
		return
	}
	for i := range s.turns.c {
		if s.turns.c[i].since == n {
			s.unclaim(i)
			return
		}
	}
}
