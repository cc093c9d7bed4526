package control

// shed keeps one invariant: a refusal that is no rate's costs the key no
// pause and teaches the learner nothing. A server that states nothing
// and refuses a request now and then whatever the rate (a load balancer
// shedding load, a backend's own overload) looks, at each refusal, like
// a limit reached: the key paused, and the learner measured a quota from
// the requests accepted since the last pause. Each such refusal cut the
// pace again, and the key ended up at a few thousandths of what the
// server serves (DESIGN.md §6, "Refusals of no rate").
//
// What tells them apart: once a limit is reached, the next request the
// server sees is refused too, until its window ends or its bucket
// refills; after a refusal of no rate, it is accepted. So a bare refusal
// (no wait given, no quota stated, none learned or being measured), the
// first of its flight and after at least shedRun acceptances in the
// key's cycle, does not pause the key: its next request goes at once, as
// a lone probe, the learner measuring from the refusal as for any. If
// that probe, or a request sent after the refused one and before its
// answer, is accepted with no refusal between, the measurement is
// dropped and the ramp is as it was before the refusal. If anything is
// refused instead, the refusal is read as any, and pauses the key. The
// refused request itself waits its own backoff, the refusal floor at
// least (see Decide), whatever the key does.
//
// What this costs and lets through: a limit first reached after shedRun
// acceptances costs one more refusal, the probe's; while no quota is
// learned, at most one refusal in shedRun+1 requests goes without a
// pause (each lift begins a new cycle, whose count starts from nothing).
// A fixed window reached at the instant it ends, or a bucket that
// refilled a request by the probe, passes the probe: the key goes on as
// before, and its next refusal, within shedRun, is measured.
type shed struct {
	seq   uint64 // the refused request's grant; 0: no mark
	epoch uint64 // the epoch it was granted in: the requests sent before its answer
	cwnd  int32  // the ramp's window before the refusal
	ok    int32  // acceptances since the key's last refusal, up to shedRun, while it states and has learned nothing
}

// shedRun is how many acceptances since the key's last refusal a bare
// refusal must follow to be tried as one of no rate: one refusal in 33
// requests (3%) at most goes without a pause.
const shedRun = 32

// shedMay reports whether the refusal of l, read with nothing stated or
// foreseen, may be a refusal of no rate: the first of its flight, no
// quota learned or being measured, the key neither paused nor probing,
// and at least shedRun acceptances since its last refusal. Called before
// the learner reads the refusal.
func (s *State) shedMay(first bool, now int64) bool {
	lr := &s.learn
	return first && s.flags&flagHinted == 0 && lr.quota == nil && !lr.pending &&
		s.shed.ok >= shedRun && s.ramp.open && now >= s.pauseUntil
}

// shedCount counts an acceptance, for a key that states and has learned
// nothing: a count that only such a key needs is not kept by others.
func (s *State) shedCount() {
	if s.shed.ok < shedRun && s.flags&flagHinted == 0 && s.learn.quota == nil {
		s.shed.ok++
	}
}

// shedMark marks the key at the refusal of l, which the learner has read:
// the next request probes at once; cwnd is the ramp's window before.
func (s *State) shedMark(l *Lease, cwnd int32) {
	s.shed = shed{seq: l.seq, epoch: l.epoch, cwnd: cwnd}
	s.epoch++ // the requests in flight are of a refused flight
	s.ramp.restart()
}

// unshed reads the acceptance of l at now against the mark: the probe, or
// a request sent after the refused one before its answer, lifts it; one
// sent before the refused one changes nothing.
func (s *State) unshed(l *Lease, now int64) {
	m := s.shed
	if m.seq == 0 || l.epoch < m.epoch || l.epoch == m.epoch && l.seq <= m.seq {
		return
	}
	s.shed = shed{ok: m.ok}
	lr := &s.learn
	if !lr.pending || lr.quota != nil || now < s.pauseUntil {
		return // something else happened since: no lift
	}
	lr.pending, lr.pendCycle, lr.pendFrom, lr.pendQ, lr.lo = false, 0, 0, 0, 0
	// The probe keeps the window when it answers, now or later (see
	// ramp.opened).
	s.ramp.open, s.ramp.keep, s.ramp.cwnd = true, l.probe || s.ramp.probeSeq != 0, m.cwnd
}
