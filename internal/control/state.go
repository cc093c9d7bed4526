package control

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/politehttp/polite/parse"
)

// State is everything one budget key knows. The zero value is a key never
// used: its first request probes.
//
// Each part keeps one invariant: ramp (after a pause one request probes,
// then the number in flight grows), leases (every request in flight is
// counted until it ends or its lease expires), the policies (no more than q
// starts in any span of w; no more than r within t, counting those in
// flight), learner (what refusals revealed), retryBudget (retries stay a
// share of the traffic), shed (a refusal of no rate costs no pause).
type State struct {
	gen    uint64 // changes waiters wait for; only grows
	born   int64  // first use, or just past an earlier incarnation's (see Begin): identifies this incarnation of the state
	expiry int64  // after this, the state may be forgotten
	used   int64  // last Acquire
	flags  uint8
	seq    uint64 // grants so far
	epoch  uint64 // pauses so far: observations from before a pause are superseded

	pauseUntil  int64
	pauseReason Reason
	zeroStreak  int32 // consecutive r=0 observations without t (DESIGN.md §1.7)
	skew        int64 // the server's clock minus ours, as estimated (flagSkew; see clock.go)
	skewLo      int64 // and the bounds of what it may be
	skewHi      int64
	rateNext    int64 // Config.MaxRate: when the next start may go

	ramp     ramp
	leases   leases
	policies []policy
	learn    learner
	retry    retryBudget
	costs    costs   // quotas in units other than requests, and reservations
	turns    turns   // held requests' claims on the next starts (see turn.go)
	shed     shed    // a refusal that may be of no rate (see shed.go)
	slots    handoff // slots in flight handed off to requests that waited (see handoff.go)
}

// Flags of a State.
const (
	flagCustom   uint8 = 1 << iota // the key came from a custom key function
	flagHinted                     // the server has sent a quota that paces requests
	flagSkew                       // skew is known
	flagEarly                      // the server's resets were caught early (see earlyResets)
	flagGaveBack                   // a start was given back since the last refusal (see unstart)
	flagsAll     = flagCustom | flagHinted | flagSkew | flagEarly | flagGaveBack
)

// Grants returns how many leases the state granted since it was made.
func (s *State) Grants() uint64 { return s.seq }

// Leases returns how many leases s holds: requests in flight, or whose
// leases have not been reaped since they expired.
func (s *State) Leases() int64 { return s.leases.n }

// Awaiting returns how many of the leases s holds await their answer:
// Leases but those a Release with Outcome.Keep keeps in flight while
// their body arrives. Such a Release leaves Leases as it was and lowers
// Awaiting.
func (s *State) Awaiting() int64 { return s.leases.awaiting() }

// Generation counts the changes waiters wait for: a release, or leases
// expiring. It only grows.
func (s *State) Generation() uint64 { return s.gen }

// NextGeneration adds one to s's Generation, changing nothing else: a
// store whose generations waited on may have come from an earlier
// incarnation of the key, counted from zero again to the same number,
// moves past them so (see redisstore's commit).
func (s *State) NextGeneration() { s.gen++ }

// Expires returns the instant, in nanoseconds since 1970, before which the
// state may not be forgotten for being idle (IdleTTL after its last
// request or the end of its pause, and not before its last lease
// expires); 0 for the zero State. Expiry may be later: a store that finds
// Expires passed asks Forgettable before it forgets the state. The hot
// path keeps only this bound up to date.
func (s *State) Expires() int64 { return s.expiry }

// Forgettable reports whether the state may be forgotten at now, Expires
// being passed: no stop of retries (abnormal usage reported) is running,
// Config.MaxRate's next start has come, no start a stated quota logged
// is still within its window, and no cost quota spent from is yet to be
// whole again (a key forgotten and met afresh could otherwise start q more
// within w, spend what a cost quota no longer has, or start before
// MaxRate's spacing).
func (s *State) Forgettable(now int64) bool { return s.keep() <= now }

// InUse reports whether a request granted by the state is in flight at
// now: a state dropped then (evicted for room) would let the next request
// start beside it, past Config.MaxConcurrency. (Config.MaxRate's next
// start is not counted: every key used within 1/MaxRate, up to a year,
// would be kept, and memory bounded no more.)
func (s *State) InUse(now int64) bool { return s.liveLeases(now) > 0 }

// keep returns the instant before which the state is kept whatever its
// idleness: the end of a stop of retries, the next start Config.MaxRate
// allows, the instant the last start each stated quota logged leaves
// its window, and the instant each cost quota spent from is whole again
// (5,000 points an hour, 4,900 spent: forgotten after IdleTTL, the key
// sent its next request into the 100 left, and was refused).
func (s *State) keep() int64 {
	end := max(s.retry.stopUntil, s.rateNext)
	for i := range s.policies {
		if p := &s.policies[i]; p.w > 0 && p.log.n > 0 {
			end = max(end, addSat(p.log.last().at, p.w))
		}
	}
	for i := range s.costs.quotas {
		end = max(end, s.costs.quotas[i].spentUntil())
	}
	return end
}

// Expiry returns when the state may be forgotten: IdleTTL after its last
// request or the end of its pause, whichever is later, not before its
// last lease expires, nor before the stop of retries or the windows of
// its starts end (see Forgettable). Zero for the zero State.
func (s *State) Expiry() time.Time {
	if s.expiry == 0 {
		return time.Time{}
	}
	return at(max(s.expiry, s.keep()))
}

// Custom reports whether a request used the key as a custom key.
func (s *State) Custom() bool { return s.flags&flagCustom != 0 }

// MarkCustom records that a request used the key as a custom key, as
// Acquire with Ask.Custom does: a state written otherwise (a pause copied
// from elsewhere) is shown as one.
func (s *State) MarkCustom() { s.flags |= flagCustom }

// IsZero reports whether s is the zero State, but for its identity (see
// Begin): a state that holds nothing else holds nothing.
func (s *State) IsZero() bool {
	return s.gen == 0 && s.expiry == 0 && s.used == 0 && s.flags == 0 && s.seq == 0 &&
		s.epoch == 0 && s.pauseUntil == 0 && s.pauseReason == 0 && s.zeroStreak == 0 && s.skew == 0 && s.skewLo == 0 && s.skewHi == 0 &&
		s.rateNext == 0 && s.ramp == (ramp{}) && len(s.leases.b) == 0 && s.leases.n == 0 &&
		len(s.policies) == 0 && s.learn.isZero() && s.retry == (retryBudget{}) && s.costs.isZero() && len(s.costs.early) == 0 &&
		s.shed == (shed{})
}

// Blank reports whether s holds nothing but what Forget keeps of a key
// with no request in flight: its generation, identity, expiry and custom
// mark. A store that keeps such a state (for its generation to grow) holds
// no state of the key: MemoryStore drops it.
func (s *State) Blank() bool {
	if s.leases.n != 0 || len(s.leases.b) != 0 {
		return false
	}
	c := *s
	c.gen, c.expiry, c.flags = 0, 0, c.flags&^flagCustom
	return c.IsZero()
}

// Forget clears the state at now, keeping only its generation (one more,
// so that its waiters wake and find a fresh key), an expiry, so that a
// store keeps the generation growing for a while, the next start
// Config.MaxRate allows, and the leases of the requests still in flight:
// they count against Config.MaxConcurrency until they end, as they would
// have (dropped, the next request went beside them). With leases kept, the state stays the same incarnation,
// its grants counted on and a new epoch begun, so that their ends free
// their slots and their answers are read as from before a pause;
// otherwise it is a new one.
func (s *State) Forget(t time.Time, cfg *Config) {
	now := instant(t)
	// A key that was custom stays marked so: shown by its fingerprint,
	// never verbatim, while its forgotten state is kept.
	old, seq, epoch, cycle, ls, rn := s.born, s.seq, s.epoch, s.learn.cycle, s.leases, s.rateNext
	ls.reap(now)
	*s = State{gen: s.gen + 1, flags: s.flags & flagCustom}
	if cfg.MaxRate > 0 && rn > now {
		// The client's own ceiling, not what the key taught: the next
		// start it allows stays (cleared, a request went at once after
		// the last under a MaxRate of 1).
		s.rateNext = rn
	}
	switch {
	case ls.n > 0:
		// The counters the leases carry go on past theirs: a grant's
		// place, a pause's epoch, the learner's cycle (a request of an
		// earlier cycle, answered, is no acceptance of a later one's).
		s.born, s.seq, s.epoch, s.learn.cycle, s.leases = old, seq, epoch+1, cycle, ls
	case old != 0:
		s.Begin(now, old) // not the last one's, whatever the clock did since
	}
	s.settle(now, cfg)
}

// touch records the first use.
func (s *State) touch(now int64) {
	if s.born == 0 {
		s.born = now
	}
}

// Born returns the identity of s's incarnation (see Begin); 0 for a state
// not yet used.
func (s *State) Born() int64 { return s.born }

// Begin makes s, if not yet used, an incarnation of its key first used at
// now or just after floor, whichever is later, and returns its identity:
// floor is the identity of an earlier incarnation of the key. A lease is
// told as this incarnation's by it (see End and Release), and a state is
// otherwise known by its first use: two incarnations of a key first used
// at the same instant (a clock frozen, as in a synctest bubble, or
// coarse) took each other's leases for their own.
func (s *State) Begin(now, floor int64) int64 {
	if s.born == 0 {
		s.born = min(max(now, floor+1), maxStored)
	}
	return s.born
}

// Bound brings back within bounds, at now, the holds of a state decoded
// from a store, which another process wrote (see bound). A store in
// memory needs none: only this process's controller writes its states.
func (s *State) Bound(t time.Time, cfg *Config) {
	now, skew := instant(t), int64(skewMax)
	if s.used-now > int64(skewMax) {
		// Used later than skewMax from now: a step back of this
		// process's clock, or a process further ahead than skewMax, cut
		// to one spacing as acquireAt cuts it, so that a view of the
		// bounded state (BoundView) shows what the next request finds.
		skew = 0
	}
	s.boundAt(now, cfg, false, skew)
}

// boundAt is Bound at the instant now, MaxRate's next start kept up to
// one spacing and skew from now. With flight, the leases and reservations
// of the requests in flight are kept whatever their ends: the clock of
// this process went back (see acquireAt), and those requests are still
// running and will end them.
func (s *State) boundAt(now int64, cfg *Config, flight bool, skew int64) {
	far := addSat(now, cfg.holdSpan())
	pace := far // MaxRate's next start
	if cfg.MaxRate > 0 {
		pace = addSat(now, cfg.paceSpan()+skew)
	}
	capped := addSat(now, int64(MaxPause)) // a pause or a live observation ends by then
	if s.pauseUntil > capped || s.ramp.probeEnd > far || s.leases.last() > far || s.retry.stopUntil > far ||
		s.rateNext > pace || s.deadlineBeyond(capped) || s.costs.beyond(now, far) ||
		s.startsBeyond(addSat(now, skew)) || s.learn.distrustUntil > addSat(now, distrustMax) ||
		s.turns.beyond(s.claimEnd(now, far, pace)) {
		claims := s.claimEnd(now, far, pace)
		s.bound(now, far, skew, flight)
		s.turns.bound(claims)
		s.rateNext = min(s.rateNext, pace)
		s.settle(now, cfg)
	}
}

// skewMax is how far apart the clocks of processes sharing a Store may
// be for Config.MaxRate's spacing to hold across them: a next start
// written by a process whose clock is ahead is kept up to that much
// beyond one spacing from the reader's now (and a clock of this process
// gone back by more is a step: see acquireAt). Cut to one spacing, a next
// start written 1.5 s ahead under a MaxRate of 1 was already past for its
// writer, which went again at once: 8,992 starts in 10 s; and two
// processes whose clocks were 1.5 s apart cut each other's next start at
// every Acquire, each waking the other, in a loop that never slept.
const skewMax = 10 * time.Second

// clockBack is how far the clock must go back between two Acquires for
// acquireAt to bound the state from the later: requests racing for a key
// read their clocks in one order and take its lock in another, a little
// back each time.
const clockBack = time.Second

// claimEnd returns the latest a turn claim may lapse at now: turnGrace
// after the longest hold the state's own rules give, far (a pause, a
// lease), a stated window's pace, or MaxRate's next start (at most pace).
func (s *State) claimEnd(now, far, pace int64) int64 {
	end := max(far, min(s.rateNext, pace))
	for i := range s.policies {
		if w := s.policies[i].w; w > 0 {
			end = max(end, addSat(now, w))
		}
	}
	return addSat(end, turnGrace)
}

// deadlineBeyond reports whether a policy's live observation ends after
// far: its window, capped at MaxPause, began in the future.
func (s *State) deadlineBeyond(far int64) bool {
	for i := range s.policies {
		if p := &s.policies[i]; p.deadline > far || p.stated > far {
			return true
		}
	}
	return false
}

// startsBeyond reports whether a stated quota, or the learned one, logged
// a start after far: logged by a process whose clock is that far ahead of
// ours, or by this one before its clock went back.
func (s *State) startsBeyond(far int64) bool {
	for i := range s.policies {
		if l := &s.policies[i].log; l.n > 0 && l.last().at > far {
			return true
		}
	}
	if q := s.learn.quota; q != nil && q.log.n > 0 && q.log.last().at > far {
		return true
	}
	return s.learn.lastStart > far
}

// bound brings back to far the holds of a state no controller here wrote:
// a pause beyond MaxPause, a probe, leases or a stop of retries that end
// beyond the longest lease (or MaxPause), cost quotas stated in the future
// or whose reset is beyond MaxPause, and reservations that end beyond the
// longest lease, as a state decoded from a store may hold, written
// by a hostile or broken process. Leases that end beyond far are dropped,
// as if their requests had ended: their slots would otherwise be held for
// as long as the stored instant says, up to 2116. (Bound cuts the turn
// claims that lapse beyond the longest hold: see claimEnd.) Starts logged
// more than skew after now (by a process whose clock is that far ahead, or
// by this one before its clock went back), by a stated quota or the
// learned one, are read as made now: a stated window, up to MaxPause,
// counted from a start a day ahead held the key for up to two days, and
// kept the state (see Expiry) as long; the learned quota's even pace,
// from a start 50 years ahead, held it until then. A live observation's
// stated reset ends by MaxPause as its window does, and the learned
// quota's distrust of stated ones by distrustMax.
func (s *State) bound(now, far, skew int64, flight bool) {
	s.pauseUntil = min(s.pauseUntil, addSat(now, int64(MaxPause)))
	if s.startsBeyond(addSat(now, skew)) {
		for i := range s.policies {
			s.policies[i].log.clamp(now)
		}
		if q := s.learn.quota; q != nil {
			q.log.clamp(now)
		}
		s.learn.lastStart = min(s.learn.lastStart, now)
	}
	for i := range s.policies {
		// The reset a live observation stated, which a test of a late
		// reset goes at (see phase.go), is bound with its window: held
		// to it, a stated reset 50 years ahead held the key as long.
		p := &s.policies[i]
		p.deadline = min(p.deadline, addSat(now, int64(MaxPause)))
		p.stated = min(p.stated, addSat(now, int64(MaxPause)))
	}
	// The learned quota's distrust of stated ones lasts distrustMax at
	// most (see learner.refused): decoded unbounded, it overrode what the
	// server stated for as long as the stored instant said.
	s.learn.distrustUntil = min(s.learn.distrustUntil, addSat(now, distrustMax))
	s.ramp.probeEnd = min(s.ramp.probeEnd, far)
	s.retry.stopUntil = min(s.retry.stopUntil, far)
	for !flight && len(s.leases.b) > 0 {
		b := &s.leases.b[len(s.leases.b)-1]
		if b.end <= far {
			break
		}
		s.leases.n -= b.n
		s.leases.kept -= b.k
		s.leases.b = s.leases.b[:len(s.leases.b)-1]
	}
	s.costs.bound(now, far, flight)
	s.gen++
}

// settle recomputes the idle expiry after a change: IdleTTL after the last
// use or the end of a pause (see Expires; Expiry adds what keep holds).
func (s *State) settle(now int64, cfg *Config) {
	last := max(s.used, s.pauseUntil, now)
	s.expiry = max(addSat(last, cfg.idleTTL()), s.leases.last())
}

// grantOf returns the grant l was, counted as the key's seq is: for a
// lease of an earlier incarnation of the state, the latest (see release).
func (s *State) grantOf(l *Lease) uint64 {
	if l.born == s.born && l.born != 0 {
		return l.seq
	}
	return s.seq
}

// Paused returns the pause in force at now and what it is for; the zero
// time when there is none.
func (s *State) Paused(t time.Time) (time.Time, Reason) {
	if now := instant(t); now < s.pauseUntil {
		return at(s.pauseUntil), s.pauseReason
	}
	return time.Time{}, ReasonNone
}

// HeldUntil returns the instant (nanoseconds since 1970) before which the
// state holds a request's start back at now, whatever it costs: the end
// of its pause, of a stop of its retries, of Config.MaxRate's spacing, or
// of the pacing of its quotas of requests, stated or learned, whichever
// is latest (as View's PauseUntil, RateNext and NextStart); now or before
// when nothing does. It is for a store deciding which key to evict: the
// one whose eviction forgets least. It does not change s.
func (s *State) HeldUntil(now int64) int64 {
	return max(s.pauseUntil, s.rateNext, s.retry.stopUntil, s.paceNext(now))
}

// spaced returns the later of until and the next start Config.MaxRate
// allows: a hold that ends at until is followed by that one.
func (s *State) spaced(cfg *Config, until int64) int64 {
	until, _ = s.spacedFor(cfg, until, ReasonNone)
	return until
}

// spacedFor is spaced, with the reason of the hold that ends last: why,
// the reason of the hold until until, or ReasonPace when Config.MaxRate's
// next start is later.
func (s *State) spacedFor(cfg *Config, until int64, why Reason) (int64, Reason) {
	if cfg.MaxRate > 0 && s.rateNext > until {
		return s.rateNext, ReasonPace
	}
	return until, why
}

// Spaced returns when Config.MaxRate lets the key's next request start,
// if after t; the zero time otherwise.
func (s *State) Spaced(t time.Time) time.Time {
	if instant(t) < s.rateNext {
		return at(s.rateNext)
	}
	return time.Time{}
}

// SpaceUntil holds the key's next start back until until by
// Config.MaxRate, when that is later than what holds it, and no later
// than one spacing of Config.MaxRate from t: the spacing another copy
// of the key's state kept (a process's fallback while its Store was
// down, or the Store's) carries over. It does nothing without a MaxRate.
func (s *State) SpaceUntil(t time.Time, cfg *Config, until time.Time) {
	if cfg.MaxRate <= 0 || until.IsZero() {
		return
	}
	now := instant(t)
	s.touch(now)
	// Used at now, as PauseUntil has it: the next Acquire tells a clock
	// stepped back since (see acquireAt), which otherwise held a state
	// the spacing alone made for as long as the step.
	s.used = max(s.used, now)
	s.rateNext = max(s.rateNext, min(instant(until), addSat(now, cfg.paceSpan())))
}

// PauseUntil pauses the key at now until until (capped at MaxPause from
// now) for why, as a refusal would, when that is later than the pause in
// force: a pause another copy of the key's state learned (a process's
// fallback while its Store was down) carries over.
func (s *State) PauseUntil(t time.Time, cfg *Config, until time.Time, why Reason) {
	now, u := instant(t), instant(until)
	if u <= now || u <= s.pauseUntil {
		return
	}
	s.touch(now)
	// Used at now, as an Acquire uses it: the next Acquire tells a clock
	// stepped back since (see acquireAt), as for a state a pause alone
	// made (a process's fallback keeping the Store's).
	s.used = max(s.used, now)
	s.pause(now, u, why)
	s.gen++
	s.settle(now, cfg)
}

// pause pauses the key until until (capped at MaxPause from now) for why,
// and makes the next request a probe. Observations from before it are
// superseded (a new epoch), unless a probe was already due.
func (s *State) pause(now, until int64, why Reason) {
	until = min(until, addSat(now, int64(MaxPause)))
	if until > s.pauseUntil {
		s.pauseUntil, s.pauseReason = until, why
	}
	if s.ramp.open || s.ramp.keep {
		s.epoch++
	}
	s.ramp.restart()
}

// reapLeases drops the leases that ended by now, and reports whether it
// dropped one: as many slots the ramp lent (see stallAt) come back, a
// request that never answered holding one until its lease ended.
func (s *State) reapLeases(now int64) bool {
	n := s.leases.awaiting() // a kept lease (a body streaming) holds no slot of the window
	if !s.leases.reap(now) {
		return false
	}
	if left := s.leases.awaiting(); left == 0 {
		s.ramp.giveBack(int64(s.ramp.misses)) // none awaits its answer: all come back
	} else {
		s.ramp.giveBack(n - left)
	}
	return true
}

// took returns how long the request l took, at now: 0 when unknown.
func took(l *Lease, now int64) int64 {
	if l.start == 0 {
		return 0
	}
	return now - l.start
}

// wakeFirst returns the sooner of two instants to look again at, either
// 0 for none.
func wakeFirst(a, b int64) int64 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// hold builds a Hold.
func (s *State) hold(until int64, why Reason, wake int64) (Hold, bool) {
	return Hold{until: until, wake: wake, Reason: why, Gen: s.gen, born: s.born}, false
}

// Acquire asks to start one request at now. It either grants it (writes
// its lease to l, to hand back to Release, and returns true), or says how
// long to hold and why (and leaves l alone).
func (s *State) Acquire(t time.Time, cfg *Config, ask Ask, l *Lease) (Hold, bool) {
	return s.acquireAt(instant(t), cfg, &ask, l, true)
}

// AcquireInstant is Acquire at the instant now, in nanoseconds since 1970
// as [Instant] converts a time: the form a caller that reads its clock as
// an instant uses, without converting it back and forth.
func (s *State) AcquireInstant(now int64, cfg *Config, ask *Ask, l *Lease) (Hold, bool) {
	return s.acquireAt(now, cfg, ask, l, true)
}

// acquireAt is Acquire at now; fast allows the quiet path (see quiet),
// which leaves the State as the full path would.
func (s *State) acquireAt(now int64, cfg *Config, ask *Ask, l *Lease, fast bool) (Hold, bool) {
	s.touch(now)
	if now < s.used-int64(clockBack) {
		// The clock went back (an NTP step) since the last Acquire: what
		// the state holds is bounded from now, as a state read from a
		// Store is (see Bound): a pause of an hour set before a step
		// back of two days held the key 49 hours, and so did MaxRate's
		// next start, a start logged, a cost quota's reset. The leases
		// and reservations stay: their requests are in flight, and end
		// them (dropped, a second request went beside the one in flight
		// under a MaxConcurrency of 1).
		// In a Store's state, back by no more than skewMax, the latest
		// use may be another process's, whose clock is ahead: its next
		// start is kept, as Bound keeps it. A state only this process
		// writes went back with its clock: one spacing, as before (a
		// step back of 5 s held the next request 5.9 s under MaxRate 1).
		skew := int64(0)
		if ask.Shared && s.used-now <= int64(skewMax) {
			skew = int64(skewMax)
		}
		s.boundAt(now, cfg, true, skew)
	}
	s.learn.idle = 0
	if s.used != 0 {
		// For a lull (see learner.noteStart). A Store's state was last
		// used by any process, whose clock may be skewMax from this
		// one's: idle by that much less, and a lull so measured is at
		// least as long as the window it must pass, read on a third
		// clock, by skewMax less again. Read whole, the Acquires of two
		// processes 3 s apart, neither of which paused, made lulls of
		// 3 s, and the first quota learned 1 per 2.1 s where the server
		// takes 100 per 10 s.
		idle := now - s.used
		if ask.Shared {
			idle -= 2 * int64(skewMax)
		}
		s.learn.idle = max(idle, 0)
	}
	s.used = now
	if ask.Custom {
		s.flags |= flagCustom
	}
	l.custom = ask.Custom
	before := s.roomBefore(cfg)
	if s.reapLeases(now) {
		s.gen++ // slots of expired leases are free: a change waiters wait for
		s.freed(now, cfg, before)
	}
	if len(s.turns.c) != 0 || len(s.slots.places) != 0 {
		fast = false // held requests' turns, requests held for a slot: see acquireTurn, handoff.go
	}
	if fast && s.quiet(now, cfg) && ask.After.IsZero() && s.ramp.admits(s.leases.awaiting()) {
		s.grantQuiet(now, cfg, ask, l)
		if l.Priced() {
			s.costs.reserve(&l.want, l.end, l, s.ramp.slowAfter())
		}
		s.settle(now, cfg)
		return Hold{}, true
	}
	if fast && ask.After.IsZero() {
		if p := s.paced(now, cfg); p != nil {
			h, ok := s.acquirePaced(now, cfg, ask, l, p)
			if !ok && ask.Turns {
				// No claims stand: its own, by when it first asked, as
				// acquireTurn takes it.
				s.turnTaken(ask.place(now), ask.Claimed, &h, false)
			}
			s.settle(now, cfg)
			return h, ok
		}
	}
	if len(s.costs.units) > 0 || len(s.costs.early) > 0 {
		s.costs.reap(now)
	}
	if ask.Probed != 0 && !ask.After.IsZero() && !s.learn.measures(ask.Probed) {
		// The measurement the request probed has ended, the key
		// accepted again (or forgotten): its wait, lengthened for that
		// measurement (see stretch), is the one it had before, which a
		// key forgotten since does not shorten (see
		// Transport.RoundTrip).
		a := *ask
		a.After, a.Probed = ask.Least, 0
		ask = &a
	}
	h, ok := s.acquireTurn(now, cfg, ask, l)
	if ok && ask.Probed != 0 {
		l.late = true
	}
	if !ok && ask.Placed && !h.placed && h.Reason != ReasonConcurrency {
		// Held for what is not a slot, its place kept: it keeps it.
		h.placed = slices.Contains(s.slots.places, ask.place(now))
	}
	s.settle(now, cfg)
	return h, ok
}

// acquireTurn is acquire, in turn (see turn.go): a request that may start
// (no Ask.After ahead, a cost a quota can hold) and is younger than the
// oldest claim standing is held; a request held claims a turn, and gives
// it up when granted.
func (s *State) acquireTurn(now int64, cfg *Config, ask *Ask, l *Lease) (Hold, bool) {
	since, again := ask.place(now), ask.Claimed
	takes := ask.After.IsZero() || now >= instant(ask.After)
	if takes && len(s.turns.c) != 0 && (len(s.costs.quotas) == 0 || s.costs.excess(now, &l.want).Unit == "") {
		if h, held := s.turnHold(now, since, l.Priced(), cfg); held {
			if ask.Turns {
				s.turnTaken(since, again, &h, false) // in line behind it
			}
			return h, false
		}
	}
	h, ok := s.acquire(now, cfg, ask, l)
	switch {
	case !ask.Turns:
	case takes:
		s.turnTaken(since, again, &h, ok)
	case !ask.First.IsZero() && ask.AfterReason == ReasonQuota && l.Priced():
		// A retry waiting for the tokens its refusal said it lacks
		// holds its place meanwhile, for the requests that cost:
		// those younger would take the tokens it waits for, and its
		// next attempt be refused again (see turn.go). The claim lasts
		// no longer than a pause may.
		c := h
		c.until = min(max(h.until, instant(ask.After)), addSat(now, int64(MaxPause)))
		c.Reason, c.own, c.cost = ReasonQuota, false, true
		s.turnTaken(since, again, &c, false)
		h.claimed = c.claimed
	default:
		h.claimed = again && s.turns.has(since)
	}
	return h, ok
}

// paced returns the key's one policy when an Acquire at now, with no
// retry's bound, may take the paced path (nil otherwise): a key whose
// server states one quota of requests, with more than one request left
// besides those awaiting their answer and its reset ahead, and nothing
// else to decide but its costs (no pause, probe, learned quota or ceiling
// of cfg; its ramp open, with room). acquire would pass every rule but the
// pace and the costs.
func (s *State) paced(now int64, cfg *Config) *policy {
	if len(s.policies) != 1 || !s.ramp.open || now < s.pauseUntil || s.learn.quota != nil ||
		cfg.MaxRate > 0 || cfg.MaxConcurrency > 0 || len(s.costs.quotas) > 0 && s.costs.anyStale(now) {
		return nil
	}
	p, counted := &s.policies[0], s.leases.awaiting()
	if p.unit != unitRequests || !s.ramp.admits(counted) ||
		p.live && (p.minR-counted < 2 || p.deadline != 0 && now >= p.deadline) {
		return nil
	}
	return p
}

// acquirePaced is acquire on the paced path (see paced), p the key's one
// policy: the costs (a cost no quota can hold) or the pace of p hold the
// request, as acquire would, or it is granted as acquire grants with no
// test, no learned quota and its ramp open (no probe): as grantQuiet does,
// its costs reserved and its start logged for p's pace.
func (s *State) acquirePaced(now int64, cfg *Config, ask *Ask, l *Lease, p *policy) (Hold, bool) {
	if len(s.costs.units) > 0 || len(s.costs.early) > 0 {
		s.costs.reap(now)
	}
	if len(s.costs.quotas) > 0 {
		if h, never := s.costExcess(now, &l.want); never {
			return h, false
		}
	}
	if s.ramp.probeEnd > now {
		s.ramp.probeEnd = now // the clock went back, as acquire reads it (the ramp is open)
	}
	paces := p.paces()
	if paces {
		if q, w := p.pace(); p.sliding || !p.log.open(now, q, w) {
			if d := p.paceWait(now); d > 0 {
				return s.hold(now+d, ReasonPace, 0)
			}
		}
	}
	if len(s.costs.quotas) > 0 {
		if h, held := s.admitCost(now, &l.want, ask); held {
			return h, false
		}
	}
	s.grantQuiet(now, cfg, ask, l)
	if l.Priced() {
		s.costs.reserve(&l.want, l.end, l, s.ramp.slowAfter())
	}
	if paces {
		q, w := p.pace()
		if !p.log.tally(now, q, w) {
			p.log.add(now, q, w, 1)
		}
		l.logged = true
	}
	return Hold{}, true
}

func (s *State) acquire(now int64, cfg *Config, ask *Ask, l *Lease) (Hold, bool) {
	if len(s.costs.quotas) > 0 {
		if h, never := s.costExcess(now, &l.want); never {
			return h, false
		}
	}
	if now < s.pauseUntil {
		// Held until the pause ends and, behind it, until the next start
		// Config.MaxRate allows: both are known now, so that a caller
		// judges its MaxWait and deadline against the later.
		until, why := s.spacedFor(cfg, s.pauseUntil, s.pauseReason)
		return s.hold(until, why, 0)
	}
	if !ask.After.IsZero() {
		if after := instant(ask.After); now < after {
			why := ask.AfterReason
			if why == ReasonNone || why >= numReasons {
				why = ReasonRetryBudget
			}
			until, why := s.spacedFor(cfg, after, why)
			return s.hold(until, why, 0) // a retry spaced out (see Decide)
		}
	}
	// An observation past its effective window is stale: it says nothing
	// about what is available now and must not be read as a refill
	// (draft-11 §4.1.2). The next request probes instead.
	for i := range s.policies {
		p := &s.policies[i]
		if p.live && p.deadline != 0 && now >= p.deadline {
			p.live = false
			s.ramp.restart()
		}
	}
	if len(s.costs.quotas) > 0 && s.costs.staled(now) {
		// A lone probe, after which the ramp is as it was: what the
		// key learned of its server's pace still holds.
		s.ramp.recheck()
	}
	if s.ramp.probeOut(now) {
		return s.hold(0, ReasonProbe, s.ramp.probeEnd)
	}
	if s.shedHolds() {
		return s.heldForSlot(now, ask)
	}
	inflight := s.leases.n
	stalled := false // the ramp's window is full, none of its requests answered in its probe timeout
	if s.ramp.open && s.ramp.probeEnd > now {
		s.ramp.probeEnd = now // the clock went back: heard from no later than now (see stallAt)
	}
	if s.ramp.open && !s.ramp.admits(s.leases.awaiting()) {
		if at := s.ramp.stallAt(); at == 0 || now < at {
			h, ok := s.heldForSlot(now, ask)
			h.wake = wakeFirst(h.wake, at)
			return h, ok
		}
		stalled = true
	}
	if s.retryHeldFromEdge(now, ask) {
		// It waits for a first attempt to test the slot, not for a
		// slot: a slot handed off to it goes on (see handoff.go).
		if ask.Placed && s.slotLeft(ask.place(now)) {
			s.gen++ // the requests held look again
		}
		return s.hold(0, ReasonConcurrency, s.leases.first())
	}
	if cfg.MaxConcurrency > 0 && inflight >= int64(cfg.MaxConcurrency) {
		return s.heldForSlot(now, ask)
	}
	if n := s.handedOff(now, ask); n > 0 && s.slotRoom(cfg, inflight) <= n {
		// The slots free are handed off to requests that waited (see
		// handoff.go): it waits behind them.
		h, ok := s.heldForSlot(now, ask)
		h.wake = wakeFirst(h.wake, s.slots.until)
		return h, ok
	}

	var cost, tested int64
	for i := range s.policies {
		p := &s.policies[i]
		switch p.unit {
		case unitConcurrent:
			if p.q > 0 && inflight >= p.q {
				return s.heldForSlot(now, ask)
			}
		case unitRequests, unitBytes:
			need, counted := int64(1), s.leases.awaiting()
			if p.unit == unitBytes {
				need, counted = p.need(), inflight
				cost = max(cost, need)
			}
			if p.unit == unitRequests && p.live && p.minR-counted == 1 {
				if at, ok := p.testAt(now, s.ramp.rtt, s.flags&flagEarly != 0); ok {
					if at > now {
						return s.hold(at, ReasonQuota, 0)
					}
					tested = p.statedEnd()
				}
			}
			if p.live && p.minR-counted*need < need {
				if p.deadline != 0 {
					return s.hold(p.deadline, ReasonQuota, 0)
				}
				if counted > 0 {
					return s.hold(0, ReasonQuota, s.leases.first())
				}
				// r was spent with no t and nothing in flight will
				// refresh it (DESIGN.md §1.7): fall back to a probe.
				p.live = false
				s.ramp.restart()
			}
			if p.paces() {
				if q, w := p.pace(); p.sliding || !p.log.open(now, q, w) {
					if d := p.paceWait(now); d > 0 {
						return s.hold(now+d, ReasonPace, 0)
					}
				}
			}
		}
	}
	if s.learn.active(s.policies, now) {
		if d := s.learn.wait(now); d > 0 {
			s.learn.binding, s.learn.held = true, true
			return s.hold(now+d, ReasonAdaptive, 0)
		}
		if slow := s.ramp.slowAfter(); s.learn.drains(now, s.leases.awaiting(), s.ramp.rtt, slow) {
			// Held for answers, not by the pace: the window is no
			// test of it (see learner.held, binding).
			return s.hold(0, ReasonAdaptive, wakeFirst(s.leases.first(), addSat(s.learn.grownAt, slow)))
		}
	}
	if cfg.MaxRate > 0 && now < s.rateNext {
		return s.hold(s.rateNext, ReasonPace, 0)
	}
	if len(s.costs.quotas) > 0 {
		if h, held := s.admitCost(now, &l.want, ask); held {
			return h, false
		}
	}

	// Granted.
	s.slotGranted(now, ask)
	if cfg.MaxRate > 0 {
		// One start per 1/MaxRate; a MaxRate so small that the spacing
		// would overflow spaces starts by maxSpan.
		s.rateNext = addSat(max(s.rateNext, now), cfg.paceSpan())
	}
	end := s.stamp(now, cfg, ask, l, cost, tested)
	if l.Priced() {
		s.costs.reserve(&l.want, end, l, s.ramp.slowAfter())
	}
	if s.learn.renews(now) && !s.learn.probeStalls(s.ramp.rtt) {
		s.ramp.recheck()
	}
	l.probe = s.ramp.granted(s.seq, now, end)
	if stalled {
		s.ramp.stalled(now)
	}
	for i := range s.policies {
		if p := &s.policies[i]; p.paces() {
			q, w := p.pace()
			if !p.log.tally(now, q, w) {
				p.log.add(now, q, w, 1)
			}
			l.logged = true
		}
	}
	s.learnLease(now, l)
	return Hold{}, true
}

// leaseSlot returns the expiry slot of a lease granted at now for ask:
// until its deadline, or the longest lease the key grants.
func (s *State) leaseSlot(now int64, cfg *Config, ask *Ask) int64 {
	lease := cfg.lease()
	until := addSat(now, lease) // as most requests ask: the longest lease
	if !ask.Until.IsZero() {
		until = leaseUntil(now, cfg, &ask.Until)
	}
	end, ok := s.leases.reuse(s.born, until, lease)
	if !ok {
		end = s.leases.add(s.born, until, lease)
	}
	return end
}

// stamp issues l, granted at now, its lease: its expiry slot (returned),
// its place in the key's sequence and epoch, what the key estimates of the
// server's clock, the content bytes it is charged (cost) and the stated
// reset whose phase it tests (tested; see phase.go).
func (s *State) stamp(now int64, cfg *Config, ask *Ask, l *Lease, cost, tested int64) int64 {
	l.others = int32(min(s.leases.n, rampCap))
	end := s.leaseSlot(now, cfg, ask)
	s.seq++
	l.born, l.end, l.seq, l.epoch, l.cost, l.skew, l.start = s.born, end, s.seq, s.epoch, cost, s.skew, now
	l.skewOK, l.measuring, l.window, l.tested, l.logged = s.flags&flagSkew != 0, 0, false, tested, false
	l.hinted, l.unrefused = s.statedPaces(), s.retry.run == 0
	return end
}

// statedPaces reports whether a quota the key's server stated paces it now: an
// observation not past its reset (Acquire marks those past it), a quota
// per window, a concurrency limit, or a quota of what requests cost. A
// limit with no window, or an observation past its reset, stated once and
// never again, paces nothing: the local ceilings' Restraint applies again
// (see Lease.Hinted).
func (s *State) statedPaces() bool {
	if s.flags&flagHinted == 0 {
		return false
	}
	if len(s.costs.quotas) > 0 {
		return true
	}
	for i := range s.policies {
		p := &s.policies[i]
		if p.live || p.paces() || p.unit == unitConcurrent && p.q > 0 {
			return true
		}
	}
	return false
}

// learnLease records on l, granted at now, the learner's cycle it starts
// in and what that cycle has measured so far.
func (s *State) learnLease(now int64, l *Lease) {
	l.cycle = s.learn.started(s.epoch, now)
	switch {
	case s.learn.pending && (s.learn.pendQ > 0 || s.learn.quota != nil):
		l.measuring = s.learn.pendFrom
	case s.learn.cycleOK > 0:
		l.window = true
	}
}

// leaseUntil returns when a lease asked until until should end: at until,
// and no later than the longest lease allows.
func leaseUntil(now int64, cfg *Config, until *time.Time) int64 {
	limit := addSat(now, cfg.lease())
	if until.IsZero() {
		return limit
	}
	return min(max(instant(*until), now), limit)
}

// Release applies the outcome of the request l granted, at now. For a
// refused response it returns the plan the Transport executes (see
// Decide), for a transient failure that of DecideTransient; otherwise the
// zero Plan. A lease from another incarnation of the
// state (the key was forgotten meanwhile), or one already expired, frees no
// slot, but its response is still read.
func (s *State) Release(t time.Time, cfg *Config, lp *Lease, out *Outcome) Plan {
	return s.releaseAt(t, instant(t), cfg, lp, out, true)
}

// ReleaseAt is Release at t, whose instant the caller has already read:
// now must be Instant(t).
func (s *State) ReleaseAt(t time.Time, now int64, cfg *Config, lp *Lease, out *Outcome) Plan {
	return s.releaseAt(t, now, cfg, lp, out, true)
}

// releaseAt is Release at t, whose instant is now; fast allows the quiet
// path (see ReleasesQuietly), which leaves the State as the full path
// would.
func (s *State) releaseAt(t time.Time, now int64, cfg *Config, lp *Lease, out *Outcome, fast bool) Plan {
	if fast && s.ReleasesQuietly(now, lp, out) {
		s.ReleaseQuiet(now, cfg, lp, out)
		return Plan{}
	}
	if zeroCostLimit(out.Quotas) {
		o := *out
		o.Quotas = unzeroCostLimits(nil, out.Quotas) // (see unzeroCostLimits; a refusal's)
		out = &o
	}
	before := s.roomBefore(cfg)
	s.touch(now)
	s.gen++ // one fewer in flight, or something learned: waiters look again
	s.reapLeases(now)
	if len(s.costs.units) > 0 || len(s.costs.early) > 0 {
		s.costs.reap(now)
	}
	keep := s.keeps(lp, out)
	p := s.release(t, now, cfg, lp, out)
	if keep {
		s.leases.keep(lp.end) // still in flight, until End
	}
	if out.Transient {
		p = s.transient(t, now, cfg, &out.Refusal, lp, out.Rand)
	}
	s.freed(now, cfg, before)
	s.settle(now, cfg)
	return p
}

// unstart takes back the start of l, which the origin did not see (its
// answer came from a cache, if cached, or it was never sent: see
// Outcome.Cached and Outcome.Unsent), from the logs of the stated quotas'
// paces. A server that counts a cached answer anyway shows so in its next
// fresh answer, as it shows any request of another client; the state is
// marked as having given one back (flagGaveBack) only when a log took it:
// a request never sent is no evidence of what the server counts, and a
// start no log holds (forgotten since, or past its window) was not given
// back.
func (s *State) unstart(l *Lease, now int64, cached bool) {
	if cached && now < s.learn.distrustUntil {
		// A refusal after starts given back showed the server counts
		// such requests (see release): none is given back for a while.
		return
	}
	for i := range s.policies {
		if p := &s.policies[i]; p.paces() && p.log.unlog(l.start) && cached {
			s.flags |= flagGaveBack
		}
	}
}

func (s *State) release(t time.Time, now int64, cfg *Config, lp *Lease, out *Outcome) Plan {
	l := lp
	if l.custom {
		s.flags |= flagCustom
	}
	gave := false // a slot the ramp lent came back (see ramp.returned)
	if l.born == s.born && l.born != 0 && l.seq <= s.seq {
		counted := s.leases.lone(l.end) || s.leases.remove(l.end, false) // not once its lease ended
		gave = s.ramp.returned(l.seq, took(l, now), s.leases.awaiting(), counted)
		if l.Priced() {
			s.costs.unreserve(l)
		}
		if l.logged && (out.Unsent || out.Cached && !out.Refused && !out.Failed) {
			s.unstart(l, now, !out.Unsent)
		}
	} else {
		// A lease of an earlier incarnation, or one whose grant this
		// state never saw (a Store that went back to older data, or
		// ran its function on an older copy): read its answer as the
		// latest one, outside any cycle. Its counters (sequence, epoch,
		// cycle) are past the state's, which the binary form rejects.
		l = &Lease{seq: s.seq, epoch: s.epoch}
	}
	s.spend(l, out)
	// A request of a flight already refused: a refusal paused the key
	// since it was granted, and the pause runs (read before this
	// answer's own quotas may pause it). A request is granted only once
	// the key's pause has ended, so a pause running now was set since;
	// a pause for a spent quota, not a refusal, does not make it late.
	late := out.Refused && l.epoch != s.epoch && s.pauseUntil > now &&
		(s.pauseReason == ReasonBackoff || s.pauseReason == ReasonRetryAfter)
	if !out.Unsent && (len(out.Quotas) > 0 || len(s.costs.quotas) > 0) && (!s.costs.isZero() || costUnits(out.Quotas)) &&
		s.costs.observe(l, out.Quotas, now, writtenAgo(l, out, now), out.Dated, out.Refused, out.Refused && out.Rejected, out.Served, s.seq) {
		s.flags |= flagHinted
	}
	if out.First {
		s.retry.deposit(now)
	}
	if out.Failed || out.Transient {
		// A probe that failed leaves the key probing; a gateway's 502 or
		// 504 the Transport retries says nothing of the origin's limit
		// either: not an acceptance, so nothing is learned from it, and
		// no run of refusals ends.
		return Plan{}
	}
	if l.start != 0 {
		s.ramp.observe(now, now-l.start)
	}
	if out.Dated {
		s.dated(l, out.Skew, now) // see clock.go
	}
	r := rng(out.Rand)
	inflight := s.leases.n
	s.earlyResets(out)

	// Before reading a refusal: did the budget think quota was left?
	hinted := false
	for i := 0; out.Refused && i < len(s.policies); i++ {
		if p := &s.policies[i]; p.unit != unitConcurrent && p.live && p.minR > inflight {
			hinted = true
			break
		}
	}
	// A refusal is foreseen when a quota of the response, in any unit, is
	// spent: OpenAI's and Anthropic's token quotas refuse while requests
	// are left, and that is not a lie.
	s.endZeroStreak(out)
	foreseen := false
	for i := range out.Quotas {
		q := &out.Quotas[i]
		if q.Remaining == 0 {
			foreseen = true
		}
		if s.observe(l, q, now, out, &r) && q.Remaining > 0 {
			hinted = true
		}
	}
	// A cost quota with less left than the request costs foresaw the
	// refusal too, and says how long this request must wait.
	costWait, costRefused, costShort := int64(0), false, false
	if out.Refused {
		costWait, costRefused = s.costs.refusal(l, out.Quotas)
		foreseen = foreseen || costRefused
		if !out.Unavailable {
			costShort = s.costs.learnRefusal(l, out.Quotas) // a 503 says nothing of what the request cost
		}
	}
	if !out.Refused {
		s.retry.accepted()
		s.shedAccepted(l, now)
		s.learn.accepted(l, s.leases.n, now)
		if l.probe && now >= s.pauseUntil {
			// The probe came back and the key is not paused again (its
			// own answer may have spent the quota): ramp up.
			s.ramp.opened(now, s.flags&flagHinted != 0, s.leases.awaiting() > 0)
		} else if !gave {
			s.ramp.grow(s.flags&flagHinted != 0, s.shed.ok < shedRun)
		}
		return Plan{}
	}

	// Not one more answer of a flight already refused: one that paused
	// the key (a new epoch since), or an overdraw the learner undid
	// without a pause (granted before the undoing, see learner.absorbs).
	first := l.epoch == s.epoch && (s.learn.revertSeq == 0 || l.seq > s.learn.revertSeq)
	// A bare refusal of a marked request's flight (sent before its
	// answer) may keep the mark (see shed.go); any other refusal ends
	// it, one soon after a lift restores the measurement the lift
	// dropped, and a bare one may be of no rate.
	cwnd, most := s.ramp.cwnd, s.shed.most
	bare := !foreseen && !hinted && len(out.Quotas) == 0 && !out.Refusal.Given
	flight := bare && s.shedFlight(l)
	shedMay := false
	if !flight {
		if bare {
			s.shedUnlift(l)
		}
		shedMay = bare && len(out.Refusal.Violated) == 0 && s.shedMay(l, first, now)
		s.shed = shed{}
	}
	// A 503 of a key that states its quotas now is the service
	// unavailable (see Outcome.Unavailable): it says nothing of them, so
	// the learner neither measures it nor distrusts them. Measured, an
	// outage of 20s was learned as a window of 35s, which paced a fixed
	// window of 20 per 4s at 20 per 24-32s once the server was back. But
	// a 503 refused again, with no acceptance between, while the stated
	// quota still says requests are left, is a limit the quota does not
	// tell (its hints lie): read as a 429's.
	unavailable := out.Unavailable && statedLately(s.policies, now) && !(hinted && s.retry.run > 0)
	// A refusal no stated quota foresaw, after starts were given back
	// for answers from a cache, shows the server counted them (a cache
	// that sends Age on answers the origin saw, against RFC 9111 §5.1):
	// the stated quotas are distrusted, as when they said requests were
	// left, and no start is given back while they are.
	gaveBack := s.flags&flagGaveBack != 0
	s.flags &^= flagGaveBack
	overdrew, from := s.learn.refused(l, s.seq, s.epoch, now, foreseen || unavailable, hinted || gaveBack)
	ref := &out.Refusal
	if costRefused {
		adj := *ref
		tokenRefusal(&adj, &l.want, out.Quotas, costWait)
		ref = &adj
	}
	plan := Decide(t, ref, l, s.retry, r.next())
	plan.Short = costShort
	if plan.Stop {
		s.retry.stopUntil = addSat(now, int64(stopRetrying))
	}
	if overdrew && plan.Reason == ReasonBackoff && !plan.Stop {
		// A step of growth overdrew, and is undone: the quota that held
		// paces the key, and only the refused request waits (see
		// learner.refused), the floor and no more: the refusal was the
		// step's. A wait the server gave still pauses the key.
		plan.Wait, plan.Pause = RefusalFloor, 0
	} else if shedMay && plan.Reason == ReasonBackoff && !plan.Stop && s.learn.pending {
		// Maybe a refusal of no rate: no pause, the next request
		// probes once fewer are in flight (see shed.go); the refused
		// request waits its own wait.
		plan.Pause = 0
		s.shedMark(l, cwnd, most)
	} else if flight && plan.Reason == ReasonBackoff && !plan.Stop {
		plan.Pause = 0 // one more of the marked flight: the probe decides
	} else {
		if flight {
			s.shed = shed{} // the key pauses: the mark ends
		}
		if from != 0 && plan.Reason == ReasonBackoff && !plan.Stop {
			// The even pace tried after a refused burst was refused
			// too: the key backs off as from the burst refused (see
			// learner.refused); the refused request still waits its
			// floor.
			plan.Pause = time.Duration(max(from+int64(plan.Pause)-now, 0))
		}
		until := addSat(now, int64(plan.Pause))
		if late && plan.Reason == ReasonBackoff {
			// The refusals of a flight count once: one refused after
			// its flight's first pauses the key no longer than that
			// refusal did, or the refusal floor (the server's wait,
			// if longer) from its own arrival, whichever ends later.
			// The refused request itself still waits its own wait:
			// its pause, shorter, tells the Transport so.
			wait := int64(RefusalFloor)
			if ref.Given {
				wait = max(wait, int64(ref.Wait))
			}
			if c := max(s.pauseUntil, addSat(now, wait)); c < until {
				until, plan.Pause = c, time.Duration(c-now)
			}
		}
		if c := addSat(now, int64(MaxPause)); until > c {
			// The key pauses no longer than MaxPause (see pause): the
			// plan says so, and the refused request carries the rest
			// of its wait itself.
			until, plan.Pause = c, MaxPause
		}
		s.pause(now, until, plan.Reason)
		if overdrew {
			s.learn.resume(s.pauseUntil)
		}
	}
	if plan.Retry && !ref.fits(t, max(plan.Wait, time.Duration(s.spaced(cfg, s.pauseUntil)-now))) {
		// The key was paused already, by another answer, or
		// Config.MaxRate spaces its next start, past what the request
		// may wait: it would fail waiting, its refusal drained. The
		// refusal goes back to the caller instead.
		plan.Retry = false
	}
	if plan.Retry && !l.want.free() && s.costs.excess(now, &l.want).Unit != "" {
		// The refusal stated a whole quota below the request's cost: no
		// wait can make room, and the retry would fail with a CostError,
		// the refusal lost. The refusal goes back to the caller.
		plan.Retry, plan.Denied = false, ReasonQuota
	}
	for _, name := range out.Refusal.Violated {
		name = policyName(name)
		for i := range s.policies {
			if p := &s.policies[i]; p.name == name && p.unit != unitConcurrent {
				p.live, p.epoch, p.minR, p.deadline, p.stated = true, s.epoch, 0, s.pauseUntil, 0
			}
		}
	}
	s.retry.refused(first, shortWait(&out.Refusal), s.grantOf(l), s.seq, now)
	if plan.Retry {
		s.retry.take(now)
	}
	return plan
}

// observe applies one quota from a response. It reports whether the quota
// is one that paces requests.
func (s *State) observe(l *Lease, q *parse.Quota, now int64, out *Outcome, r *rng) bool {
	bytes, refused := out.Bytes, out.Refused
	var u unit
	switch q.Unit {
	case "", "request", "requests":
		u = unitRequests
	case "content-bytes":
		u = unitBytes
	case "concurrent-requests":
		u = unitConcurrent
	default:
		return false // tokens, points...: paced by what requests cost (see costs)
	}
	s.flags |= flagHinted
	if u == unitRequests && refills(q.Dialect) && q.Remaining > 0 {
		q = wholeAt(q)
	}
	p := s.known(q.Policy, q.Partition, u)
	if p == nil {
		p = s.find(q.Policy, q.Partition, u)
	}
	if p == nil {
		// Only a name the key does not have renames a policy: one that
		// has its own would lose to it what it had left (two per-route
		// quotas of one size, each answer stating its own, became two of
		// one name, the other's 2 left forgotten and 6 granted at once).
		p = s.renamed(q, u, now)
	}
	if p == nil {
		p = s.addPolicy(q.Policy, q.Partition, u, now, min(q.Limit, maxQuota), window(q.Window))
	}
	if p == nil {
		return false
	}
	p.seen = now
	inflight := s.leases.n
	if u == unitConcurrent {
		// At most q in flight; without q, r is the free slots at the
		// server besides the requests it was serving.
		switch {
		case q.Limit > 0:
			p.q = min(q.Limit, maxQuota)
		case q.Remaining >= 0:
			p.q = min(max(1, q.Remaining+inflight+1), maxQuota)
		}
		return true
	}
	if q.Limit >= 0 && q.Window > 0 {
		limit, w := min(q.Limit, maxQuota), window(q.Window)
		if (p.q == 0 || p.w == 0) && u == unitRequests && w > 0 {
			// A quota heard of for the first time (or its window): the
			// requests that already went count against it too.
			p.log.add(now, limit, w, min(inflight+1, limit))
		}
		p.q, p.w = limit, w
	} else if q.Limit > 0 && p.w == 0 {
		// A limit without its window (OpenAI's, legacy X-RateLimit-Limit
		// alone): it caps r and is shown, but cannot pace by q per w.
		p.q = min(q.Limit, maxQuota)
	}
	if u == unitBytes && bytes >= 0 {
		if p.cost == 0 {
			p.cost = float64(bytes)
		} else {
			p.cost = 0.75*p.cost + 0.25*float64(bytes)
		}
		p.cost = min(p.cost, float64(maxCost))
	}
	if q.Remaining < 0 {
		return true
	}
	p.refute(l, q, refused, p.sliding && !p.live && p.minR == 0, p.mark, p.deadline)
	stale := !p.live || (p.deadline != 0 && now >= p.deadline)
	if !stale && l.epoch <= p.epoch && l.seq <= p.mark && q.Remaining > p.minR {
		// A higher r from a request sent before the current observation
		// came back: an answer overtaken by a later one. (A request sent
		// after it reached the server after it, so its r is newer.)
		return true
	}
	p.live, p.epoch, p.mark, p.minR = true, l.epoch, s.seq, min(q.Remaining, maxQuota)
	if p.q > 0 && p.minR > p.q {
		p.minR = p.q // r is never trusted above the quota the policy states
	}
	last, lastStated := p.deadline, p.statedEnd()
	p.deadline, p.stated = 0, 0
	reset, t := int64(0), s.resetOf(q)
	if t > 0 {
		reset = min(int64(t), int64(MaxPause))
		p.deadline = now + reset
	}
	early := s.flags&flagEarly != 0
	// What the answer counts back of the quota: what is left and the
	// requests in flight (the answer's own among them).
	if p.phase(l, refused, early, q.Remaining+inflight, last, lastStated, now) || (refused && p.firstVoid(l, last, lastStated)) {
		// Refused in a lead taken from the stated reset: the lead was
		// wrong, which says nothing of the server's algorithm.
	} else if refused {
		s.recognise(p, l, q, lastStated, now)
		s.recogniseRetryAfter(p, l, q, &out.Refusal)
	} else if l.probe { // only a probe's answer tells (see recogniseAccepted)
		s.recogniseAccepted(p, l, q, lastStated, now)
	}
	p.firstRead(l, q, refused, early, inflight, lastStated, now)
	p.takeLead(now)
	p.firstBound(now, early)
	if p.sliding && p.paces() && q.Remaining == 0 {
		p.live = false // a sliding-window counter: its pace decides, not its reset
		return true
	}
	if q.Remaining > 0 {
		return true
	}
	// The quota is spent: pause the whole key until the effective window
	// has passed, then probe (draft-11 §7).
	switch {
	case t > 0 && refused && out.Refusal.Given && out.Refusal.Reason == ReasonRetryAfter &&
		draftFields(q.Dialect) && int64(out.Refusal.Wait) < reset:
		// draft-11 §7: Retry-After takes precedence over the RateLimit
		// fields, and the effective window may be ignored; the spent
		// observation yields to the server's wait, for which Decide
		// pauses the key (its floor and jitter with it), and the next
		// request probes. Of the other families the later of the two holds: a
		// vendor's Retry-After may be another limit's (GitHub's
		// secondary limits beside its spent primary one). The stated
		// reset stays the policy's: cut to the wait, a probe refused
		// again then read as refused at its reset, the mark of a
		// sliding-window counter.
		p.live = false
	case t > 0:
		s.pause(now, p.deadline+r.jitter(reset/50), ReasonQuota)
	case t < 0:
		// r=0 and no t (DESIGN.md §1.7): exponential fallback before the
		// next request.
		d := zeroBackoffBase << min(s.zeroStreak, 6)
		s.zeroStreak = min(s.zeroStreak+1, 64)
		s.pause(now, now+min(d, zeroBackoffMax)+r.jitter(d/10), ReasonBackoff)
	default:
		// r=0;t=0: the window ends now. The key pauses until just
		// after, so that its next request probes alone, as after any
		// pause (the server may be a moment behind), and this answer,
		// a probe's, does not open the ramp (see Release).
		p.live = false
		s.pause(now, now+1, ReasonQuota)
	}
	return true
}

// spend counts the answer to l, accepted, the origin's own and stating no
// quota, against the r of each quota of requests observed before l was
// granted: r less one (draft-11 §7: no response need carry the fields).
// Requests in flight count against r until they are answered (see
// acquire); without spend, an answer with no fields gave its request back,
// and r bounded the requests in flight, not those sent within t. An
// answer that states quotas spends none it does not state: the server
// says which apply to the request (GitHub's X-RateLimit-Resource, a
// per-route policy, a partition key), and a search quota spent by the
// answers of the core one held every request to the key at 30 a minute.
// A server that states only the quota nearest its end (Appendix B.1.2)
// is not told from one of those: its other quotas count their requests
// in flight only.
func (s *State) spend(l *Lease, out *Outcome) {
	if len(out.Quotas) > 0 || out.Refused || out.Failed || out.Transient || out.Unsent || out.Cached {
		return
	}
	for i := range s.policies {
		if p := &s.policies[i]; p.unit == unitRequests && p.live && p.minR > 0 && l.seq > p.mark {
			p.minR--
		}
	}
}

// draftFields reports whether dialect is of the RateLimit fields of the
// IETF drafts, to which draft-11 §7's precedence of Retry-After applies.
func draftFields(dialect string) bool {
	switch dialect {
	case "ietf", "draft-07", "draft-06", "gitlab":
		return true
	}
	return false
}

// endZeroStreak ends the doubling of r=0 without t (DESIGN.md §1.7) at an
// answer that states quotas, none of them spent with no t. Another quota
// of the answer spent with no t keeps it, however many quotas have room.
// An answer that states none keeps it too: a bare refusal shows no room,
// and an answer from a cache, which the Transport passes with no quotas
// either, must change nothing (§1.5).
func (s *State) endZeroStreak(out *Outcome) {
	if s.zeroStreak != 0 && len(out.Quotas) > 0 && !spentUntimed(out.Quotas) {
		s.zeroStreak = 0
	}
}

// spentUntimed reports whether one of quotas, of requests, is spent with
// no reset: r=0 and no t (DESIGN.md §1.7).
func spentUntimed(quotas []parse.Quota) bool {
	for i := range quotas {
		q := &quotas[i]
		if q.Remaining == 0 && q.Reset < 0 {
			switch q.Unit {
			case "", "request", "requests", "content-bytes", "concurrent-requests":
				return true
			}
		}
	}
	return false
}

// known returns the key's policy with that identity, as policy does, when
// it is the first and the name and pk are no longer than a policy keeps
// (nil otherwise): most keys have one policy, and its lookup is inline.
func (s *State) known(name string, pk []byte, u unit) *policy {
	if len(s.policies) > 0 {
		if p := &s.policies[0]; p.unit == u && len(p.pk) == len(pk) && len(pk) == 0 && p.name == name {
			return p
		}
	}
	return nil
}

// renamed returns the policy q renames, if any, renamed: one of q's unit,
// partition, quota and window, stated before but not in this answer (not
// seen at now). A server that names its policy afresh (a window's number
// in the name, say) keeps its starts and what was recognised of it: a
// sliding-window counter stating a new name on every answer was read as a
// new quota each time, with no start logged and no pace of its own, and
// refused 42 of 200 requests at 20 per 4s.
func (s *State) renamed(q *parse.Quota, u unit, now int64) *policy {
	if q.Limit <= 0 || q.Window <= 0 || u == unitConcurrent {
		return nil
	}
	limit, w := min(q.Limit, maxQuota), window(q.Window)
	pk := partition(q.Partition)
	for i := range s.policies {
		p := &s.policies[i]
		if p.unit == u && p.q == limit && p.w == w && p.seen < now && len(p.pk) == len(pk) && (len(pk) == 0 || p.pk == string(pk)) {
			p.name = strings.Clone(policyName(q.Policy))
			return p
		}
	}
	return nil
}

// redundant returns the index of a policy that a new one of q per w, of
// partition pk and unit u, makes redundant, and that does not make the new
// one redundant in turn; -1 if none. No more than q in any span of w
// allows no more than q·⌈w'/w⌉ in a span of w': a policy of q' per w'
// with q' at least that bounds nothing the new one does not, unless its
// live observation has fewer left than that (a quota of 100 a minute with
// 3 left, dropped for 1 a second, let 20 requests start in 24 s against a
// quota the server said was spent). (One that makes the new one redundant
// too states the same bound: replaced, each would replace the other on
// every answer, its start log lost.)
func (s *State) redundant(pk []byte, u unit, q, w int64) int {
	if u == unitConcurrent || q <= 0 || w <= 0 {
		return -1
	}
	for i := range s.policies {
		p := &s.policies[i]
		if p.unit == u && p.pk == string(pk) && implies(q, w, p.q, p.w) && !implies(p.q, p.w, q, w) &&
			(!p.live || p.minR >= q*(p.w/w+min(p.w%w, 1))) {
			return i
		}
	}
	return -1
}

// implies reports whether no more than q starts in any span of w means no
// more than q2 in any span of w2.
func implies(q, w, q2, w2 int64) bool {
	if q <= 0 || w <= 0 || q2 <= 0 || w2 <= 0 {
		return false
	}
	n := w2/w + min(w2%w, 1) // spans of w that cover one of w2
	return n <= q2/q         // q·n <= q2, without overflow
}

// partition returns the partition key a state keeps for pk: pk, or, when
// longer than maxKeyLen, its SHA-256 digest, so that two long keys that
// differ only past their first bytes stay two partitions (cut, they were
// one, whose observations overwrote each other's).
func partition(pk []byte) []byte {
	if len(pk) <= maxKeyLen {
		return pk
	}
	sum := sha256.Sum256(pk)
	return sum[:]
}

// policyName returns the name a state keeps for a policy or quota named
// name: name, or, when longer than maxKeyLen, its first bytes and 16 hex
// digits of its SHA-256 digest, maxKeyLen bytes in all, so that two long
// names that differ only past their first bytes stay two policies (cut,
// two per-route quotas of one size were one, and what one had left was
// lost).
func policyName(name string) string {
	if len(name) <= maxKeyLen {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:maxKeyLen-17] + "~" + hex.EncodeToString(sum[:8])
}

// find returns the key's policy of that name (kept as policyName keeps it),
// partition and unit; nil if it has none.
func (s *State) find(name string, pk []byte, u unit) *policy {
	name = policyName(name)
	pk = partition(pk)
	for i := range s.policies {
		// The unit and the lengths first: most keys have no partition,
		// and an empty pk needs no comparison of bytes.
		p := &s.policies[i]
		if p.unit == u && len(p.pk) == len(pk) && p.name == name && (len(pk) == 0 || p.pk == string(pk)) {
			return p
		}
	}
	return nil
}

// addPolicy adds a policy of that identity, which the key has not (see
// find), if there is room, and returns it; nil if there is none. q per w
// is what it states (0: unknown), which may make a policy kept redundant
// (see redundant).
func (s *State) addPolicy(name string, pk []byte, u unit, now, q, w int64) *policy {
	name = policyName(name)
	pk = partition(pk)
	if len(s.policies) >= maxPolicies {
		// Replace the policy heard of least recently among those that
		// bind nothing now; with none such, the new one is ignored. A
		// server stating a ninth policy on each answer would otherwise
		// evict, answer after answer, the quota whose starts pace the key.
		old := -1
		for i := range s.policies {
			if p := &s.policies[i]; !p.binds(now) && (old < 0 || p.seen < s.policies[old].seen) {
				old = i
			}
		}
		if old < 0 {
			// All bind: one the new policy makes redundant goes, so that
			// a tight quota listed ninth, after eight loose ones, is
			// kept (ignored, it let 800 requests start in a second
			// against 10 per second stated).
			old = s.redundant(pk, u, q, w)
		}
		if old < 0 {
			return nil
		}
		s.policies = append(s.policies[:old], s.policies[old+1:]...)
	}
	// A copy of the name: it may be part of a response's header line, of
	// up to megabytes, which the state would otherwise keep whole.
	s.policies = append(s.policies, policy{name: strings.Clone(name), pk: string(pk), unit: u})
	return &s.policies[len(s.policies)-1]
}
