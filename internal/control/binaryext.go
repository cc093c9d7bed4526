package control

import (
	"encoding/binary"
	"math"
	"slices"
)

// The end of the binary form, after the retry budget: the refusals in a
// row (all, and those that gave no wait or one below the refusal floor), the ramp's latency
// estimate and probe timeouts, the learner's steps.
//
// After the cost quotas, a State may end with tails, each a tag byte and
// its fields, written only when one of its fields is set: a State without
// them has the form it had before they existed, and a form that ends
// before a tail reads its fields as zero.
const (
	tailLearn  = 1  // the learner's last undone step and the server's burst
	tailSmooth = 2  // the learner's even pace: its state and the cycle it was tried from
	tailCut    = 3  // the requests the learner's last multiplicative decrease counted
	tailPhase  = 4  // each policy's phase: flags, lead, and the reset stated (see phase.go)
	tailFirst  = 5  // each policy's bound on windows rounded down: span, opened, test (see first.go)
	tailLo     = 6  // the learner's lower bound on the window it measures, and its quick rate step
	tailRate   = 7  // the learner's rate: the grants at its last cut, an acceptance since, a rate step held
	tailWindow = 8  // the window the learner's last measurement ended with
	tailTurn   = 9  // held requests' claims on the next starts, oldest first (see turn.go), the high bit of each reason marking a claim for a cost
	tailPrev   = 10 // the learner's answers of the cycle before, accepted
	tailStart  = 11 // the learned quota's latest start, at its instant
	tailShed   = 12 // a refusal that may be of no rate: its grant, its epoch, the ramp's window before it, the others in flight at its grant; acceptances since the last refusal and the most in flight among them (twice, once); the ramp's window held; a lift, and whether the window was held at the mark; a lift's dropped measurement (see shed.go)
	tailScale  = 13 // each cost unit's scale, what the requests granted since its latest observation reserved, the part of it no scale applies to (see costs.learn), and the largest cost the server accepted (see costs.excess)
	tailFrom   = 14 // each cost unit's latest grant when what was reserved since started over (costUnit.from)
	tailEarly  = 15 // the units no answer has stated yet that requests in flight reserve in (costs.early): count, then each: name, reservations
	tailCapped = 16 // the window the learner's last measurement measured beyond the doubling it took (learner.capped)
	tailCost   = 17 // a byte of the cost units a request declared a cost in (costUnit.declared), a byte of the cost quotas whose window of MaxPause is the one stated (not costQuota.cut)
	tailFailed = 18 // the key's grants when a transient failure last counted as a flight, and when (retryBudget.failSeq, failAt)
	tailLull   = 19 // until the learner's first measurement ends, the lulls it keeps (learner.lulls), oldest first: count, then each: start, gap, acceptances since
	tailEdge   = 20 // a window held to a limit in flight: its refusals a step past it in a row, and the others in flight at the last one's grant (ramp.edge, ramp.edgeAt)
	tailSlots  = 21 // the places of the oldest requests held for a slot in flight, one for each, oldest first, and the slots handed off to them and until when (see handoff.go)
)

// claimCost marks, in the reason of a claim in the turns' tail, a claim
// for a cost (claim.cost), whose reason is always ReasonQuota.
const claimCost = 0x80

// Flags of a policy's mark as a sliding-window counter, a byte each at the
// end of the binary form's fixed part (0 and 1 as a bool before the other
// two existed).
const (
	slidingMark     = 1 << iota // policy.sliding
	slidingFixed                // policy.fixed
	slidingRowShift = 2         // policy.foreseen, in the bits above
	slidingRowMask  = 3 << slidingRowShift
)

// Flags of a policy's phase in its tail.
const (
	phaseSkips  = 1 << iota // policy.skips
	phaseTested             // policy.tested
	phaseAll    = phaseSkips | phaseTested
)

// ext writes the end of the binary form of s.
func (e *encoder) ext(s *State) {
	e.uint(uint64(s.retry.run))
	e.uint(uint64(s.retry.streak))
	e.uint(uint64(s.ramp.rtt))
	e.uint(uint64(s.ramp.misses))
	e.bool(s.ramp.keep)
	l := &s.learn
	e.b = append(e.b, l.trial, l.pinned, l.last)
	e.uint(l.trialAt)
	e.uint(uint64(l.prev))
	e.at(l.pinnedAt)
	e.uint(uint64(l.stride))
	e.uint(uint64(l.floor))
	e.int(s.skewLo)
	e.int(s.skewHi)
	for i := range s.policies {
		p := &s.policies[i]
		var f byte
		if p.sliding {
			f |= slidingMark
		}
		if p.fixed {
			f |= slidingFixed
		}
		f |= p.foreseen << slidingRowShift
		e.b = append(e.b, f)
	}
}

// tails writes the tails of the binary form of s that are set.
func (e *encoder) tails(s *State) {
	l := &s.learn
	if l.revertSeq != 0 || l.burst != 0 {
		e.b = append(e.b, tailLearn)
		e.uint(l.revertSeq)
		e.uint(uint64(l.burst))
	}
	if l.smooth != 0 {
		e.b = append(e.b, tailSmooth, l.smooth)
		e.uint(l.smoothAt)
	}
	if l.cut != 0 {
		e.b = append(e.b, tailCut)
		e.uint(uint64(l.cut))
	}
	for i := range s.policies {
		if p := &s.policies[i]; p.skips || p.tested || p.lead != 0 || p.stated != 0 {
			e.b = append(e.b, tailPhase)
			for i := range s.policies {
				p := &s.policies[i]
				var f byte
				if p.skips {
					f |= phaseSkips
				}
				if p.tested {
					f |= phaseTested
				}
				e.b = append(e.b, f)
				e.uint(uint64(p.lead))
				e.at(p.stated)
			}
			break
		}
	}
	for i := range s.policies {
		if p := &s.policies[i]; p.span != 0 || p.opened != 0 || p.first != firstUntested {
			e.b = append(e.b, tailFirst)
			for i := range s.policies {
				p := &s.policies[i]
				e.b = append(e.b, p.first)
				e.uint(uint64(p.span / int64(resetGrain)))
				e.at(p.opened)
			}
			break
		}
	}
	if l.lo != 0 || l.quick {
		e.b = append(e.b, tailLo)
		e.uint(uint64(l.lo))
		e.bool(l.quick)
	}
	if l.cutSeq != 0 || l.cutOK || l.rated {
		e.b = append(e.b, tailRate)
		e.uint(l.cutSeq)
		e.bool(l.cutOK)
		e.bool(l.rated)
	}
	if l.measured != 0 {
		e.b = append(e.b, tailWindow)
		e.uint(uint64(l.measured))
	}
	if t := &s.turns; len(t.c) != 0 || t.held {
		e.b = append(e.b, tailTurn)
		e.uint(uint64(len(t.c)))
		for _, c := range t.c {
			e.at(c.since)
			e.uint(uint64(c.n))
			e.at(c.until)
			r := byte(c.reason)
			if c.cost {
				r |= claimCost
			}
			e.b = append(e.b, r)
		}
		e.bool(t.held)
	}
	if l.prevOK != 0 {
		e.b = append(e.b, tailPrev)
		e.uint(uint64(l.prevOK))
	}
	if l.lastStart != 0 {
		e.b = append(e.b, tailStart)
		e.at(l.lastStart)
	}
	if m := s.shed; m != (shed{}) || s.ramp.capped {
		e.b = append(e.b, tailShed)
		e.uint(m.seq)
		e.uint(m.epoch)
		e.uint(uint64(m.cwnd))
		e.uint(uint64(m.sent))
		e.uint(uint64(m.ok))
		e.uint(uint64(m.most))
		e.uint(uint64(m.top))
		e.bool(s.ramp.capped)
		e.bool(m.lifted)
		e.bool(m.held)
		e.uint(m.pendCycle)
		e.at(m.pendFrom)
		e.uint(uint64(m.pendQ))
	}
	for i := range s.costs.units {
		if u := &s.costs.units[i]; u.scale != 0 || u.since != 0 || u.fits != 0 {
			e.b = append(e.b, tailScale)
			for i := range s.costs.units {
				u := &s.costs.units[i]
				e.uint(uint64(u.scale))
				e.uint(uint64(u.since))
				e.uint(uint64(u.fixed))
				e.uint(uint64(u.fits))
			}
			break
		}
	}
	for i := range s.costs.units {
		if s.costs.units[i].from != 0 {
			e.b = append(e.b, tailFrom)
			for i := range s.costs.units {
				e.uint(s.costs.units[i].from)
			}
			break
		}
	}
	if len(s.costs.early) > 0 {
		e.b = append(e.b, tailEarly)
		e.uint(uint64(len(s.costs.early)))
		for i := range s.costs.early {
			e.str(s.costs.early[i].name)
			e.reservations(&s.costs.early[i])
		}
	}
	if s.learn.capped != 0 {
		e.b = append(e.b, tailCapped)
		e.uint(uint64(s.learn.capped))
	}
	// Only while the units or quotas are full, where they are read (see
	// unitOf and quota): the common key's form stays what versions
	// before this tail write and read.
	if declared, exact := s.costs.flags(); declared|exact != 0 && s.costs.full() {
		e.b = append(e.b, tailCost, declared, exact)
	}
	if s.retry.failSeq != 0 {
		e.b = append(e.b, tailFailed)
		e.uint(s.retry.failSeq)
		e.at(s.retry.failAt)
	}
	if l := &s.learn; l.nLulls > 0 {
		e.b = append(e.b, tailLull)
		e.uint(uint64(l.nLulls))
		for _, u := range l.lulls[:l.nLulls] {
			e.at(u.at)
			e.uint(uint64(u.gap))
			e.uint(uint64(u.ok))
		}
	}
	// Only for a window held, or marked as held (see shedMark), as the
	// decoder reads it: a ramp held by nothing has no use for the count.
	if (s.ramp.edge != 0 || s.ramp.edgeAt != 0) && (s.ramp.capped || s.shed.held) {
		e.b = append(e.b, tailEdge)
		e.uint(uint64(s.ramp.edge))
		e.uint(uint64(s.ramp.edgeAt))
	}
	if h := &s.slots; len(h.places) != 0 {
		e.b = append(e.b, tailSlots)
		e.uint(uint64(len(h.places)))
		for _, p := range h.places {
			e.at(p)
		}
		e.uint(uint64(h.n))
		e.at(h.until)
	}
}

// ext reads what encoder.ext wrote into n.
func (d *decoder) ext(n *State) {
	n.retry.run = int32(d.bounded(maxRun))
	n.retry.streak = int32(d.bounded(uint64(n.retry.run)))
	n.ramp.rtt = int64(d.bounded(uint64(maxSpan)))
	n.ramp.misses = int32(d.bounded(maxMisses))
	n.ramp.keep = d.bool()
	l := &n.learn
	l.trial, l.pinned, l.last = d.byte(), d.byte(), d.byte()
	if l.trial&^stepsAll != 0 || l.pinned&^stepsAll != 0 || l.last&^stepsAll != 0 {
		d.fail()
	}
	l.trialAt = d.uint()
	l.prev = int64(d.bounded(uint64(maxSpan)))
	l.pinnedAt = d.at()
	l.stride = int32(d.bounded(rateStride))
	l.floor = int64(d.bounded(uint64(maxSpan)))
	n.skewLo, n.skewHi = d.int(), d.int()
	if n.skewLo < -int64(maxSpan) || n.skewHi > int64(maxSpan) || n.skewLo > n.skewHi {
		d.fail()
	}
	for i := range n.policies {
		f := d.byte()
		row := f >> slidingRowShift
		if f&^(slidingMark|slidingFixed|slidingRowMask) != 0 || row >= refuteRow || row != 0 && f&slidingMark == 0 {
			d.fail()
		}
		p := &n.policies[i]
		p.sliding, p.fixed, p.foreseen = f&slidingMark != 0, f&slidingFixed != 0, row
	}
}

// tails reads what encoder.tails wrote into n: each tail at most once, in
// order, none of them empty.
func (d *decoder) tails(n *State) {
	last := byte(0)
	for len(d.b) > 0 && !d.err {
		tag := d.byte()
		if tag <= last {
			d.fail() // unknown, repeated or out of order
			return
		}
		last = tag
		switch tag {
		case tailLearn:
			l := &n.learn
			if l.revertSeq = d.uint(); l.revertSeq > n.seq {
				d.fail()
			}
			l.burst = int64(d.bounded(uint64(maxQuota)))
			if l.revertSeq == 0 && l.burst == 0 {
				d.fail() // never written
			}
		case tailSmooth:
			l := &n.learn
			if l.smooth = d.byte(); l.smooth == 0 || l.smooth > smoothMax || l.quota == nil {
				d.fail() // never written (an even pace is of a learned quota), or unknown
			}
			if l.smoothAt = d.uint(); l.smoothAt > l.cycle {
				d.fail()
			}
		case tailCut:
			if n.learn.cut = int64(d.bounded(uint64(maxQuota))); n.learn.cut == 0 {
				d.fail() // never written
			}
		case tailPhase:
			set := false
			for i := range n.policies {
				p := &n.policies[i]
				f := d.byte()
				if f&^phaseAll != 0 {
					d.fail()
				}
				p.skips, p.tested = f&phaseSkips != 0, f&phaseTested != 0
				p.lead = int64(d.bounded(uint64(resetGrain)))
				if p.stated = d.at(); p.stated != 0 && p.stated < p.deadline {
					d.fail() // a lead is taken from the reset stated, never added
				}
				set = set || f != 0 || p.lead != 0 || p.stated != 0
			}
			if !set {
				d.fail() // never written
			}
		case tailFirst:
			set := false
			for i := range n.policies {
				p := &n.policies[i]
				if p.first = d.byte(); p.first > firstVoid {
					d.fail()
				}
				p.span = int64(d.bounded(uint64(maxSpan/resetGrain))) * int64(resetGrain)
				p.opened = d.at()
				set = set || p.first != firstUntested || p.span != 0 || p.opened != 0
			}
			if !set {
				d.fail() // never written
			}
		case tailLo:
			l := &n.learn
			l.lo = int64(d.bounded(uint64(maxSpan)))
			l.quick = d.bool()
			if l.lo == 0 && !l.quick {
				d.fail() // never written
			}
		case tailRate:
			l := &n.learn
			if l.cutSeq = d.uint(); l.cutSeq > n.seq {
				d.fail()
			}
			l.cutOK, l.rated = d.bool(), d.bool()
			if l.cutSeq == 0 && !l.cutOK && !l.rated {
				d.fail() // never written
			}
		case tailWindow:
			if n.learn.measured = int64(d.bounded(uint64(maxSpan))); n.learn.measured == 0 {
				d.fail() // never written
			}
		case tailTurn:
			t := &n.turns
			k := int(d.bounded(maxTurns))
			if k > 0 {
				t.c = make([]claim, 0, k)
			}
			for range k {
				c := claim{since: d.at(), n: int32(d.bounded(maxClaim)), until: d.at()}
				r := d.byte()
				c.reason, c.cost = Reason(r&^claimCost), r&claimCost != 0
				if c.since == 0 || c.n == 0 || c.until < c.since || c.reason >= numReasons || c.cost && c.reason != ReasonQuota ||
					len(t.c) > 0 && c.since <= t.c[len(t.c)-1].since {
					d.fail() // never written, out of order, or claimed past its end
					return
				}
				t.c = append(t.c, c)
			}
			if t.held = d.bool(); k == 0 && !t.held {
				d.fail() // never written
			}
		case tailPrev:
			if n.learn.prevOK = int64(d.bounded(uint64(maxQuota))); n.learn.prevOK == 0 {
				d.fail() // never written
			}
		case tailStart:
			if n.learn.lastStart = d.at(); n.learn.lastStart == 0 {
				d.fail() // never written
			}
		case tailShed:
			m := &n.shed
			m.seq, m.epoch, m.cwnd, m.sent = d.bounded(n.seq), d.bounded(n.epoch), int32(d.bounded(rampCap)), int32(d.bounded(rampCap))
			m.ok, m.most, m.top = int32(d.bounded(shedRun)), int32(d.bounded(rampCap)), int32(d.bounded(rampCap))
			n.ramp.capped = d.bool()
			m.lifted, m.held = d.bool(), d.bool()
			m.pendCycle, m.pendFrom, m.pendQ = d.bounded(n.learn.cycle), d.at(), int64(d.bounded(uint64(maxQuota)))
			// As shedMark, shedFlight and unshed leave it: a mark of an
			// epoch before the key's; a lift of one, with what it
			// dropped and the others in flight at the lifted
			// refusal's grant; or neither, and only the counts.
			mark := m.seq != 0 && m.epoch < n.epoch && !m.lifted
			lift := m.seq == 0 && m.lifted && m.epoch < n.epoch && m.cwnd == 0
			none := m.seq == 0 && !m.lifted && m.epoch == 0 && m.cwnd == 0 && m.sent == 0
			if !m.lifted && (m.pendCycle != 0 || m.pendFrom != 0 || m.pendQ != 0) ||
				!mark && !lift && !none || m.held && (!mark || m.cwnd <= 0) || m.top < m.most || *m == (shed{}) && !n.ramp.capped {
				d.fail() // never written
			}
		case tailScale:
			set := false
			for i := range n.costs.units {
				u := &n.costs.units[i]
				u.scale = int64(d.bounded(maxScale))
				u.since = int64(d.bounded(uint64(maxQuota)))
				u.fixed = int64(d.bounded(uint64(u.since)))
				u.fits = int64(d.bounded(uint64(maxQuota)))
				set = set || u.scale != 0 || u.since != 0 || u.fits != 0
			}
			if !set {
				d.fail() // never written
			}
		case tailFrom:
			set := false
			for i := range n.costs.units {
				u := &n.costs.units[i]
				u.from = d.bounded(n.seq)
				set = set || u.from != 0
			}
			if !set {
				d.fail() // never written
			}
		case tailEarly:
			c := &n.costs
			k := d.bounded(maxCostUnits + 3) // and the three token units
			if k == 0 || len(c.units) >= maxCostUnits {
				d.fail() // never written
				return
			}
			c.early = make([]costUnit, k)
			for i := range c.early {
				u := &c.early[i]
				u.name = d.str()
				d.reservations(u)
				if !isCostUnit(u.name) || len(u.res) == 0 ||
					slices.ContainsFunc(c.units, func(v costUnit) bool { return v.name == u.name }) ||
					slices.ContainsFunc(c.early[:i], func(v costUnit) bool { return v.name == u.name }) {
					d.fail() // never written: a unit known, twice, or with nothing reserved
					return
				}
			}
			if c.earlyOthers() > maxCostUnits {
				d.fail() // never written
			}
		case tailCost:
			declared, exact := d.byte(), d.byte()
			if declared|exact == 0 || !n.costs.full() || !n.costs.setFlags(declared, exact) {
				d.fail() // never written
			}
		case tailCapped:
			if n.learn.capped = int64(d.bounded(uint64(MaxPause))); n.learn.capped == 0 || n.learn.quota == nil {
				d.fail() // never written (a learned quota's), or of none
			}
		case tailFailed:
			if n.retry.failSeq = d.uint(); n.retry.failSeq == 0 || n.retry.failSeq > n.seq {
				d.fail() // never written, or past the key's grants
			}
			n.retry.failAt = d.at()
		case tailLull:
			d.lulls(&n.learn)
		case tailSlots:
			d.slots(&n.slots)
		case tailEdge:
			// Kept while the window is held, or marked as held at a
			// refusal (see shedMark).
			n.ramp.edge, n.ramp.edgeAt = uint8(d.bounded(maxEdge)), int32(d.bounded(rampCap))
			if n.ramp.edgeAt == 0 || !n.ramp.capped && !n.shed.held {
				d.fail() // never written: an edge counts from a level
			}
		default:
			d.fail()
		}
	}
}

// slots reads the key's slots handed off into h, as encoder.ext wrote
// them: one to maxWaiting places, none before the one before, and no
// more slots handed off than places, with their lapse.
func (d *decoder) slots(h *handoff) {
	k := int(d.bounded(maxWaiting))
	if k == 0 {
		d.fail() // never written
		return
	}
	h.places = make([]int64, 0, k)
	for range k {
		p := d.at()
		if d.err || p == 0 || len(h.places) > 0 && p < h.places[len(h.places)-1] {
			d.fail() // never written: of no instant, or out of order
			return
		}
		h.places = append(h.places, p)
	}
	h.n = int32(d.bounded(uint64(k)))
	if h.until = d.at(); h.n > 0 && h.until == 0 {
		d.fail() // handed off with no lapse
	}
}

// lulls reads the learner's lulls into l, as encoder.ext wrote them: one
// to maxLulls, kept only before a quota is learned, each after the one
// before, with a gap of a refusal floor at least and half the one
// before's at most (see learner.addLull). Lulls of a cycle before the
// key's (of a measurement dropped, or about to begin) are read as they
// were written: fromLull passes over them.
func (d *decoder) lulls(l *learner) {
	k := d.bounded(maxLulls)
	if k == 0 || l.quota != nil {
		d.fail() // never written
		return
	}
	for i := range int(k) {
		u := lull{at: d.at(), gap: int64(d.bounded(uint64(MaxPause))), ok: int64(d.bounded(uint64(maxQuota)))}
		if d.err || u.at == 0 || u.gap < int64(RefusalFloor) ||
			i > 0 && (u.at <= l.lulls[i-1].at || 2*u.gap > l.lulls[i-1].gap) {
			d.fail() // never written: of no instant, out of order, or short
			return
		}
		l.lulls[i] = u
	}
	l.nLulls = uint8(k)
}

// signed reads a float64 in [-limit, limit].
func (d *decoder) signed(limit float64) float64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	if !(f >= -limit && f <= limit) { // also rejects NaN
		d.fail()
		return 0
	}
	return f
}
