package control

// shed keeps one invariant: a refusal that is no rate's costs the key no
// pause and teaches the learner nothing. Two kinds of server that state
// nothing refuse requests whatever the rate: one that sheds load (a load
// balancer, a backend's own overload) refuses a request now and then;
// one that limits the requests in flight (nginx's limit_conn, a gateway's
// concurrency cap) refuses those beyond its limit. At each refusal both
// look like a rate reached: the key paused, and the learner measured a
// quota from the requests accepted since the last pause, a rate that has
// nothing to do with either server (DESIGN.md §6, "Refusals of no rate").
//
// What tells them apart: once a rate is reached, the next request the
// server sees is refused too, until its window ends or its bucket
// refills. After a refusal of shed load it is accepted; after a refusal
// of too many in flight, it is accepted once fewer are in flight. Each
// lease records how many others were in flight at its grant (others),
// and the key keeps, since its last refusal, its acceptances (ok) and the
// most in flight that two accepted requests were sent with (most: the
// second highest, since a request sent just after an answer not yet read
// is counted with one more in flight than the server saw).
//
// A bare refusal (no wait given, no quota stated, none learned or being
// measured), the first of its flight, of a request sent with as many in
// flight as most or more (a server that frees a slot once its answer is
// sent refuses a request sent at once after an answer with as many as
// most, one short of its limit by the client's count), or after at least
// shedRun acceptances, marks the key and does not pause it; nor do the
// bare refusals of the rest of its flight (the requests sent before its
// answer) sent with more in flight than most, as a limit in flight refuses
// them (any of them, when the window was held to a limit in flight). The
// key's next request is a lone probe, sent once no more than most are in
// flight (fewer than the refused request was sent with, when the window
// was held), the learner measuring from the refusal as for any. If the
// probe is accepted, the measurement is dropped and the key goes on: with
// its window as it was, or, when the refused requests were sent with more
// in flight than most (a limit in flight reached), with a window of
// most+1, held there until shedRun acceptances, then grown by a request a
// round trip (ramp.capped); a window already held so, refused with no more
// in flight than most, is held again to what the refused request was sent
// with (held). Any other refusal is read as before, and pauses the key; a
// bare one of the lifted flight still to come, or any bare one before
// shedRun acceptances since the marked one, shows the lift was wrong, and
// restores the measurement it dropped, the acceptances since counted
// (shedUnlift), unless a limit in flight explains both: the lifted
// refusals sent with as many in flight as most or more, and this one with
// as many as they or more (shed.explains). A lift keeps that count in
// flight; one that leaves the window as it was keeps most too (the
// acceptances before the refusal it lifted count still), one that holds
// the window starts it over. A lift is past undoing after shedRun
// acceptances, or once the key states or learns a quota. Each refused
// request waits its own backoff (or the key's doubled floor), the refusal
// floor at least (see Decide), whatever the key does.
//
// What this costs and lets through: a rate first reached this way costs
// one more refusal, the probe's (or one after a wrong lift), until a quota
// is learned, after which the rule no longer applies; but a bucket whose
// refusals come shedRun acceptances or more apart, each lifted by a probe
// the refill lets through, is never learned, and refuses a request now and
// then for as long as the key runs (two workers against a bucket refilled
// at 0.7 of their pace: 56 of 3,000, one a second, at twice the throughput
// of the rate learned before; DESIGN.md §6). A limit in flight costs a
// refusal each time the held window grows past it, and the window grows
// slower each time it is refused a step past it at the same level
// (ramp.edge): one refusal in shedRun+1 requests at first, one every 32
// round trips or so once the limit has shown it stays. A refusal soon
// after a lift with fewer in flight than the lifted ones or than most, or
// after a lift of refusals with fewer than most, is read as a rate's; so
// is a first refusal with fewer in flight than most, which a limit in
// flight that frees a slot once its answer is sent may still send
// (DESIGN.md §6).
type shed struct {
	seq   uint64 // the refused request's grant; 0: no mark
	epoch uint64 // the epoch it was granted in: its flight, sent before its answer
	cwnd  int32  // the ramp's window before the refusal
	sent  int32  // the other requests in flight at the refused request's grant (the flight's most, or fewest when held); after a lift, the lifted flight's, when as many as most or more, else 0
	ok    int32  // acceptances since the key's last refusal, up to shedRun, while it states and has learned nothing
	most  int32  // the most other requests in flight at the grant of two accepted since the key's last refusal, likewise; kept as it was at a mark, and through a lift that left the window as it was
	top   int32  // the most at the grant of one: a single acceptance, its count raised by an answer not yet read, does not raise most
	held  bool   // the ramp's window was held to a limit in flight (ramp.capped) at the refusal

	// After a lift (seq 0, epoch the lifted flight's): the measurement the
	// mark began, which a refusal of the flight still to come restores.
	lifted    bool
	pendCycle uint64
	pendFrom  int64
	pendQ     int64
}

// shedRun is how many acceptances since the key's last refusal a bare
// refusal not tried for its count in flight (see shedMay) must follow to
// be tried as one of no rate; and how many a cut window is held for.
const shedRun = 32

// shedMay reports whether the refusal of l, read with nothing stated or
// foreseen, may be a refusal of no rate: the first of its flight, no quota
// learned or being measured, the key neither paused nor probing, and
// either l sent with as many in flight as two requests accepted since the
// key's last refusal or more (or since the one before, when a lift left
// the window as it was: see unshed), two or more of them in flight
// together, or at least shedRun acceptances since then. (A limit of one in
// flight cannot be told from a rate by a lone probe: both pass it.)
// Called before the learner reads the refusal.
func (s *State) shedMay(l *Lease, first bool, now int64) bool {
	lr := &s.learn
	return first && s.flags&flagHinted == 0 && lr.quota == nil && !lr.pending &&
		(l.others >= s.shed.most && s.shed.most > 0 || s.shed.ok >= shedRun) && s.ramp.open && now >= s.pauseUntil
}

// shedAccepted applies the acceptance of l at now: it may lift a mark
// (see unshed), and it counts (see shedCount). Release and ReleaseQuiet
// both call it, before the learner reads the acceptance.
func (s *State) shedAccepted(l *Lease, now int64) {
	if s.shed.seq != 0 {
		s.unshed(l, now)
	}
	s.shedCount(l)
}

// shedCount counts the acceptance of l, for a key that states and has
// learned nothing: a count that only such a key needs is not kept by
// others.
func (s *State) shedCount(l *Lease) {
	if s.flags&flagHinted != 0 || s.learn.quota != nil {
		if m := &s.shed; m.lifted {
			// Stated or learned quotas pace the key now: a lift is
			// past undoing.
			m.lifted, m.epoch, m.sent, m.pendCycle, m.pendFrom, m.pendQ = false, 0, 0, 0, 0, 0
		}
		return
	}
	if m := &s.shed; m.lifted {
		m.pendQ = min(m.pendQ+1, maxQuota) // the dropped measurement counts it, if restored
	}
	if m := &s.shed; m.seq == 0 {
		switch k := l.others; {
		case k > m.top:
			m.most, m.top = m.top, k
		case k > m.most:
			m.most = k
		}
		if r := &s.ramp; r.edgeAt > 0 && m.most >= r.edgeAt {
			// Two requests accepted with as many in flight as the one
			// refused a step past the held window: the limit moved up
			// (raised, or another client sharing it sends less), and
			// the window grows at its pace again. Held slow, the window
			// of a limit of four in flight raised to 64 at 100 ms was at
			// 13 in flight 30 s after the raise; it reaches 64 in 10 s.
			r.edge, r.edgeAt = 0, 0
		}
	}
	if s.shed.ok < shedRun {
		if s.shed.ok++; s.shed.ok == shedRun {
			// A lift is past undoing.
			if m := &s.shed; m.lifted {
				m.lifted, m.epoch, m.sent, m.pendCycle, m.pendFrom, m.pendQ = false, 0, 0, 0, 0, 0
			}
		}
	}
}

// shedMark marks the key at the refusal of l, which the learner has read:
// the next request probes once no more are in flight than most, the most
// in flight at the grant of two requests accepted since the last refusal
// before this one; cwnd is the ramp's window before.
func (s *State) shedMark(l *Lease, cwnd, most int32) {
	s.shed = shed{seq: l.seq, epoch: l.epoch, cwnd: cwnd, sent: l.others, most: most, top: most, held: s.ramp.capped}
	s.epoch++ // the requests in flight are of a refused flight
	edge, at := s.ramp.edge, s.ramp.edgeAt
	s.ramp.restart()
	if s.shed.held {
		s.ramp.edge, s.ramp.edgeAt = edge, at // the held window's refusals in a row, which unshed counts on
	}
}

// shedFlight reports whether a bare refusal of l is one more of the
// marked flight that keeps the mark: sent, as a limit in flight refuses,
// with more in flight than any request accepted before the mark (shed
// load refuses one request, not two of a flight); or any, when the
// window was held to a limit in flight, which may refuse a request sent
// at once after an answer with no more in flight than were accepted, and
// then the window is held to the fewest any was sent with.
func (s *State) shedFlight(l *Lease) bool {
	m := &s.shed
	if m.seq == 0 || l.epoch != m.epoch || !s.learn.pending || !m.held && (l.others <= m.most || m.most == 0) {
		return false
	}
	if m.held {
		m.sent = min(m.sent, l.others)
	} else {
		m.sent = max(m.sent, l.others)
	}
	return true
}

// shedUnlift restores, at a refusal of l, the measurement a lift dropped,
// when l is of the lifted flight or fewer than shedRun acceptances came
// since the marked refusal: the lift was wrong (the server's rate, not
// shed load or a limit in flight), and the refusal is read as one more
// while measuring from the first. Not when a limit in flight explains
// both refusals (shed.explains): the lifted ones sent with as many in
// flight as most or more, l with as many as they or more (a bucket
// refilled by the probe refuses whatever is in flight; a limit in flight,
// only as many or more). Restored so, a limit of two in flight at 20 ms
// (100 a second), refused once at one in flight, lifted, and refused
// again at one or two, was learned as a rate, 15 per 240 ms, and run at
// 0.12 to 0.5 of ideal (DESIGN.md §6).
func (s *State) shedUnlift(l *Lease) {
	m, lr := &s.shed, &s.learn
	if m.lifted && (l.epoch == m.epoch || m.ok < shedRun) && !m.explains(l) && lr.quota == nil && !lr.pending && s.flags&flagHinted == 0 {
		lr.pending, lr.pendCycle, lr.pendFrom, lr.pendQ, lr.lo = true, m.pendCycle, m.pendFrom, m.pendQ, 0
	}
}

// explains reports whether a limit in flight explains a bare refusal of l
// after a lift as it did the refusals lifted: they were sent with as many
// in flight as most or more (sent, kept by unshed), and l with as many as
// they or more. Such a refusal does not restore the measurement the lift
// dropped (see shedUnlift): sent since the lift with as many in flight as
// most or more, it is tried as one of no rate (see shedMay); with fewer
// (most grew since the lift), it pauses the key, which measures from it
// as from any refusal. Tried too, or restoring the measurement, those
// refusals cost two in flight at 20 ms 1 to 3 runs of 2,000 at 0.12 of
// ideal, against 0 or 1.
func (m *shed) explains(l *Lease) bool {
	return m.lifted && m.sent > 0 && l.others >= m.sent
}

// shedHolds reports whether the probe after a mark must wait: more
// requests await their answers than most. A body still streaming does not
// hold it, as it holds no probe (see end.go): a stream may last as long
// as its lease.
func (s *State) shedHolds() bool {
	m := &s.shed
	most := m.most
	if m.held {
		// A limit in flight shown before: the probe goes with fewer in
		// flight than the refused request was sent with, as most may
		// count an answer not yet read.
		most = min(most, max(m.sent-1, 0))
	}
	return m.seq != 0 && !s.ramp.open && s.ramp.probeSeq == 0 && s.leases.awaiting() > int64(most)
}

// unshed reads the acceptance of l at now against the mark: the probe
// lifts it.
func (s *State) unshed(l *Lease, now int64) {
	m := s.shed
	if m.seq == 0 || l.epoch <= m.epoch || !l.probe {
		return
	}
	s.shed = shed{ok: m.ok}
	// The held window's refusals a step past it in a row, which shedMark
	// kept through the ramp's restart: counted on below, when the window
	// is held again, and dropped otherwise (a ramp not held keeps none).
	edge, edgeAt := s.ramp.edge, s.ramp.edgeAt
	s.ramp.edge, s.ramp.edgeAt = 0, 0
	lr := &s.learn
	if !lr.pending || lr.quota != nil || now < s.pauseUntil || s.flags&flagHinted != 0 {
		return // something else happened since: no lift
	}
	s.shed.lifted, s.shed.epoch, s.shed.pendCycle, s.shed.pendFrom, s.shed.pendQ = true, m.epoch, lr.pendCycle, lr.pendFrom, lr.pendQ
	lr.pending, lr.pendCycle, lr.pendFrom, lr.pendQ, lr.lo = false, 0, 0, 0, 0
	// The window as it was; when the refused request was sent with more
	// in flight than any request accepted since the key's last refusal,
	// at most as many as were accepted together, held there until
	// shedRun acceptances and grown slowly after (see ramp.grow). The
	// probe keeps the window when it answers (see ramp.opened).
	cwnd := m.cwnd
	switch {
	case m.held:
		// A window held to a limit in flight, and refused again: one
		// more than the refused request was sent with is too many. Held
		// again, as a cut one is, never wider, to what it was sent with,
		// whether or not more were in flight than most: refused with
		// more, the window grew a step past the limit, and the step is
		// undone. (Held to most+1, one short of the limit when the step
		// came soon after the last level was reached, a limit of four
		// in flight was run at three for 32 acceptances after every
		// other step: 0.725 of ideal over 200 tasks, 0.81 over 1,000,
		// against 0.758 and 0.896 with this rule alone.) Refused with no
		// more than most:
		// a server that frees a slot only once its answer is sent
		// refuses a request sent at once after an answer; a limit shared
		// with other clients, one sent with few in flight. (Given back
		// whole, the window was no longer held, grew by a request an
		// answer, and its next refusal, soon after the lift, paused the
		// key and measured a rate.)
		//
		// Refused again a step past the window that held (with more in
		// flight than most), at the same level as the last such refusal
		// or below it, the limit stays where it is: each such refusal
		// in a row halves the window's growth (see ramp.grow). One at a
		// level above the last starts the count over from it: a window
		// still growing, refused at random by a server that sheds load
		// (counted, its growth was slowed, and the worst of 40 runs of
		// the scenario row that sheds one request in 100 took 2.04 s at
		// 100 workers, against 1.93 s). So does a refusal with no more
		// in flight than most: such a server refuses at random whatever
		// is in flight, and each of its refusals holds the full window
		// to one less than it was; slowed as well, the window shrank to
		// one in flight (0.12 of ideal, against 0.93).
		c := max(m.sent, 1)
		if cwnd > 0 {
			c = min(c, cwnd)
		}
		cwnd, s.ramp.capped = c, true
		switch r := &s.ramp; {
		case m.sent <= m.most:
			r.edge, r.edgeAt = 0, 0
		case edgeAt > 0 && m.sent <= edgeAt:
			r.edge, r.edgeAt = min(edge+1, maxEdge), m.sent
		default:
			r.edge, r.edgeAt = 0, m.sent
		}
	case m.sent > m.most && m.most > 0 && (cwnd <= 0 || m.most+1 < cwnd):
		cwnd, s.ramp.capped = m.most+1, true
	}
	if m.sent >= m.most && m.most > 0 {
		// A limit in flight could have refused the lifted requests:
		// a refusal after the lift is weighed against their count in
		// flight (see shed.explains).
		s.shed.sent = m.sent
	}
	if !s.ramp.capped {
		// The window as it was: the acceptances before the refusal
		// count still, and a refusal after the lift is weighed against
		// them (see shedMay). A window held starts them over: what the
		// limit lets through is counted anew.
		s.shed.most, s.shed.top = m.most, m.top
	}
	// Open: its misses are slots lent (see ramp.stallAt), none yet.
	s.ramp.open, s.ramp.keep, s.ramp.cwnd, s.ramp.misses = true, true, cwnd, 0
}

// retryHeldFromEdge reports whether a retry (ask.After set) must wait
// for fewer requests in flight: the ramp's window, held to a limit in
// flight, grows past it (see ramp.grow), and the request would take the
// window's last slot, with more in flight than any two requests accepted
// since the key's last refusal had. A retry keeps its place in line (see
// Ask.First), so the slot a growing window adds went to the request that
// had waited longest, a retry: at the server's limit in flight, the same
// request was refused at each step, every 1.3 s at four in flight
// answering in 100 ms, until its attempts were spent while the server
// took the others. A first attempt tests the wider window; a retry goes
// within what held. A window with room to spare holds no retry: workers
// whose retries waited for the flight to grow sent nothing meanwhile, so
// it did not grow, and the retries waited on (0.35 of ideal, against
// 0.93, on a server that sheds a request in 100). Nor is a retry held
// more than a refusal floor past its own earliest start (ask.After): the
// rule waits for a level to hold twice, which each refusal starts over,
// and would otherwise hold a retry for as long as the server kept
// refusing steps.
func (s *State) retryHeldFromEdge(now int64, ask *Ask) bool {
	if ask.After.IsZero() || !s.ramp.open || !s.ramp.capped || s.ramp.cwnd <= 0 || s.shed.ok < shedRun || s.shed.seq != 0 {
		return false
	}
	if now-instant(ask.After) >= int64(RefusalFloor) {
		return false
	}
	n := s.leases.awaiting()
	return n > int64(s.shed.most) && n+1 >= int64(s.ramp.cwnd)
}
