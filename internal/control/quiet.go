package control

import (
	"time"

	"github.com/politehttp/polite/parse"
)

// The quiet path. Most requests go to a key that has nothing to decide:
// its server states no quota, nothing pauses it, its ramp is open, no
// learned quota, cost or ceiling bounds it. For those, Acquire and Release
// do only the bookkeeping the full path would do (the lease, the grant
// count, the learner's cycle, the ramp, the retry budget), skipping the
// rules that cannot apply, and leave the State exactly as the full path
// would: a differential test and a fuzz target drive both paths with the
// same events and compare the States' binary forms after every step.
// Release takes it for every accepted answer, whatever quotas it states:
// only a refusal, a failure or a lease of an earlier incarnation of the
// state needs the full path. (A key whose server states one quota is
// granted on the paced path: see State.paced.)

// Instant returns t as the State's clock reads it: nanoseconds since 1970,
// within [1, 2^62].
func Instant(t time.Time) int64 { return instant(t) }

// InstantOf returns the instant of the time whose Unix nanoseconds are ns,
// as Instant(time.Unix(0, ns)) does.
func InstantOf(ns int64) int64 {
	switch {
	case ns < 0:
		return 1
	case ns >= maxInstant/int64(time.Second)*int64(time.Second):
		return maxInstant
	}
	return max(ns, 1)
}

// quiet reports whether an Acquire at now has nothing to decide beyond
// the ramp's window and the ask's own bound, which the caller checks: no
// policy, cost quota or reservation, learned quota, pause, probe to wait
// for, or ceiling of cfg.
func (s *State) quiet(now int64, cfg *Config) bool {
	return len(s.policies) == 0 && s.ramp.open && s.costs.isZero() && len(s.costs.early) == 0 && s.learn.quota == nil &&
		now >= s.pauseUntil && !(cfg.MaxRate > 0) && cfg.MaxConcurrency <= 0
}

// grantQuiet grants a request on the quiet path: what acquire does when it
// grants with no policy, cost, learned quota or ceiling, its ramp open.
//
// It is stamp (with no cost and no test), learner.started and learnLease,
// inline: with no learned quota, no start is logged and no cycle renews.
func (s *State) grantQuiet(now int64, cfg *Config, ask *Ask, l *Lease) {
	l.others = int32(min(s.leases.n, rampCap))
	end := s.leaseSlot(now, cfg, ask)
	s.seq++
	s.ramp.probeEnd = now // as ramp.granted records it, the ramp open
	lr := &s.learn
	fresh := lr.cycleEpoch != s.epoch || lr.cycleStart == 0
	if fresh {
		lr.cycle++
		lr.cycleEpoch, lr.cycleStart, lr.cycleOK, lr.prevOK, lr.held = s.epoch, now, 0, 0, false // no learned quota
	}
	if !lr.pending {
		lr.noteStart(now, fresh)
	}
	l.born, l.end, l.seq, l.epoch, l.cycle, l.cost, l.skew, l.start = s.born, end, s.seq, s.epoch, lr.cycle, 0, s.skew, now
	l.tested, l.measuring, l.probe, l.skewOK, l.window, l.logged = 0, 0, false, s.flags&flagSkew != 0, false, false
	l.hinted, l.unrefused = s.statedPaces(), s.retry.run == 0
	switch {
	case lr.pending && (lr.pendQ > 0 || lr.quota != nil):
		l.measuring = lr.pendFrom
	case lr.cycleOK > 0:
		l.window = true
	}
}

// ReleasesQuietly reports whether a Release at now of l with out has
// nothing to decide, so that ReleaseQuiet may apply it: an answer
// accepted to a lease of this incarnation of the state (as it is once
// Release has recorded its first use).
func (s *State) ReleasesQuietly(now int64, l *Lease, out *Outcome) bool {
	born := s.born
	if born == 0 {
		born = now // as touch records it
	}
	return l.born == born && l.born != 0 && l.seq <= s.seq && !out.Refused && !out.Failed && !out.Transient
}

// ReleaseQuiet is ReleaseAt at now of l with out, whose Plan is the zero
// Plan, on the quiet path: for a release that ReleasesQuietly allows, it
// applies what release does for an accepted answer: its quotas are
// observed as release observes them, and its costs (see costs) applied,
// without what only a refusal needs.
func (s *State) ReleaseQuiet(now int64, cfg *Config, l *Lease, out *Outcome) {
	before := s.roomBefore(cfg)
	s.touch(now)
	s.gen++ // one fewer in flight: waiters look again
	s.reapLeases(now)
	if len(s.costs.units) > 0 || len(s.costs.early) > 0 {
		s.costs.reap(now)
	}
	keep := out.Keep && s.leases.has(l.end)
	counted := s.leases.lone(l.end) || s.leases.remove(l.end, false) // not once its lease ended
	gave := s.ramp.returned(l.seq, took(l, now), s.leases.awaiting(), counted)
	if l.Priced() {
		s.costs.unreserve(l)
	}
	if out.Cached && l.logged {
		s.unstart(l, now, true)
	}
	if out.First {
		s.retry.deposit(now)
	}
	if l.start != 0 {
		s.ramp.observe(now, now-l.start)
	}
	if out.Dated {
		s.dated(l, out.Skew, now)
	}
	s.spend(l, out)
	// The quotas of requests, then the costs, from the quotas in a cost
	// unit, which observe passes over (the two touch nothing in common;
	// release applies the costs first).
	s.endZeroStreak(out)
	costly := false
	if len(out.Quotas) > 0 {
		r := rng(out.Rand)
		for i := range out.Quotas {
			if q := &out.Quotas[i]; !s.observe(l, q, now, out, &r) && isCostUnit(q.Unit) {
				costly = true
			}
		}
	}
	quotas := out.Quotas
	if costly && zeroCostLimit(quotas) {
		var unzeroed [4]parse.Quota                    // zeroed only here: most answers state no such limit
		quotas = unzeroCostLimits(unzeroed[:], quotas) // (see unzeroCostLimits)
	}
	if (costly || !s.costs.isZero() && (len(quotas) > 0 || len(s.costs.quotas) > 0)) && s.costs.observe(l, quotas, now, writtenAgo(l, out, now), out.Dated, false, false, out.Served, s.seq) {
		s.flags |= flagHinted
	}
	s.retry.accepted()
	s.shedAccepted(l, now)
	if lr := &s.learn; lr.quota == nil && !lr.pending && lr.smooth != smoothTrial {
		// learner.accepted, inline: with no learned quota and no
		// measurement pending, only the cycle's count changes.
		if l.cycle == lr.cycle && l.cycle != 0 {
			lr.cycleOK++
			if lr.nLulls > 0 {
				lr.countLulls(l.start)
			}
		}
	} else {
		lr.accepted(l, s.leases.n, now)
	}
	if l.probe && now >= s.pauseUntil {
		s.ramp.opened(now, s.flags&flagHinted != 0, s.leases.awaiting() > 0)
	} else if !gave {
		s.ramp.grow(s.flags&flagHinted != 0, s.shed.ok < shedRun)
	}
	if keep {
		s.leases.keep(l.end)
	}
	s.freed(now, cfg, before)
	s.settle(now, cfg)
}
