package control

import "time"

// learner keeps one invariant: what refusals revealed of a key's limits
// paces it, never shortening a wait the server gave. It infers them from
// what the server accepts and refuses, for servers that say little or
// nothing about their limits, or say more than they grant (a hint is not a
// grant):
//
//   - A refusal the headers did not foresee (no quota in it is spent) starts
//     a measurement: the requests the server accepted since the last pause
//     are its quota, and the time from the first of them until the key is
//     accepted again is its window. A fixed window reveals q and w this
//     way; a token bucket reveals its refill.
//   - The learned quota paces the key like a stated one (no more than q
//     starts in any span of w), on top of whatever the headers say.
//   - Each time the learned quota has held requests back for two windows
//     without a refusal, it grows by an eighth (at least one): speed comes
//     back when refusals stop. A new refusal measures it again, and doubles
//     the windows to wait before the next growth, up to 4. A measurement
//     lowers a learned quota by 30% at most at a time: a cycle measured out
//     of phase with the server's window must not cut the pace to nothing.
//   - A refusal while the headers said quota was left marks them
//     unreliable: the learned quota applies for a minute, doubling each time
//     they are caught again, up to an hour. Without such a mark, a learned
//     quota applies only while the key states no quota of its own.
type learner struct {
	// A cycle is a burst of starts: it begins after a pause, or once the
	// learned quota has held requests back a learned window after the
	// cycle began.
	cycle      uint64 // cycles so far
	cycleEpoch uint64 // the key's epoch the cycle began in
	cycleStart int64  // its first start
	cycleOK    int64  // its requests answered without refusal
	held       bool   // the learned quota held a request back since the cycle began

	pending   bool   // a measurement waits for the next acceptance
	pendCycle uint64 // the cycle refused
	pendQ     int64
	pendFrom  int64

	quota   *policy // learned; nil until a measurement ends
	binding bool    // the learned quota held a request back since it last grew
	grownAt int64
	growGap int32 // learned windows between growths: doubles with each refusal of a learned quota

	distrustUntil int64
	distrustFor   int64
}

const (
	distrustMin = int64(time.Minute)
	distrustMax = int64(time.Hour)
	minGrowGap  = 2 // learned windows between growths, at least
	maxGrowGap  = 4 // and at most
)

func (l *learner) isZero() bool {
	return l.cycle == 0 && l.cycleEpoch == 0 && l.cycleStart == 0 && l.cycleOK == 0 && !l.held &&
		!l.pending && l.pendCycle == 0 && l.pendQ == 0 && l.pendFrom == 0 && l.quota == nil &&
		!l.binding && l.grownAt == 0 && l.growGap == 0 && l.distrustUntil == 0 && l.distrustFor == 0
}

// active reports whether the learned quota paces requests now.
func (l *learner) active(policies []policy, now int64) bool {
	if l.quota == nil {
		return false
	}
	if now < l.distrustUntil {
		return true
	}
	for i := range policies {
		p := &policies[i]
		if p.unit != unitConcurrent && (p.live || (p.q > 0 && p.w > 0)) {
			return false
		}
	}
	return true
}

// started records a granted request and returns its cycle.
func (l *learner) started(epoch uint64, now int64) uint64 {
	renew := l.held && l.quota != nil && now-l.cycleStart >= l.quota.w
	if l.cycleEpoch != epoch || l.cycleStart == 0 || renew {
		l.cycle++
		l.cycleEpoch, l.cycleStart, l.cycleOK, l.held = epoch, now, 0, false
	}
	if q := l.quota; q != nil {
		q.log.add(now, q.q, q.w, 1)
	}
	return l.cycle
}

// accepted records a response that was not a refusal; inflight is the
// number still in flight.
func (l *learner) accepted(g *Lease, inflight, now int64) {
	if g.cycle == l.cycle && g.cycle != 0 {
		l.cycleOK++
	}
	if !l.pending {
		if q := l.quota; q != nil && l.binding && now-l.grownAt >= int64(max(minGrowGap, l.growGap))*q.w {
			q.q = min(q.q+max(1, q.q/8), maxQuota)
			l.grownAt, l.binding = now, false
		}
		return
	}
	if g.cycle <= l.pendCycle {
		if g.cycle == l.pendCycle && g.cycle != 0 {
			l.pendQ++ // accepted in the refused cycle, answered late
		}
		return
	}
	// The key is accepted again: the measurement ends.
	l.pending = false
	if l.pendQ < 1 {
		return
	}
	w := now - l.pendFrom
	if w <= 0 {
		return
	}
	q := l.pendQ
	if l.quota == nil {
		l.quota = &policy{unit: unitRequests}
	} else {
		// A learned quota refused: decrease multiplicatively, no further
		// than the measurement says. A cycle measured out of phase with
		// the server's window can count a handful of acceptances, or a
		// short window; one such measurement must not cut the pace to
		// nothing.
		q = max(q, l.quota.q*7/10, 1)
		w = max(w, l.quota.w*7/10)
	}
	l.quota.q, l.quota.w = min(q, maxQuota), min(w, int64(maxSpan))
	l.quota.log.reset()
	l.quota.log.add(now, l.quota.q, l.quota.w, min(inflight+1, l.quota.q))
	l.grownAt, l.binding = now, false
}

// refused records a refusal. foreseen reports whether a quota in the
// response was spent; hinted whether the response or a live observation
// said quota was left.
func (l *learner) refused(g *Lease, epoch uint64, now int64, foreseen, hinted bool) {
	if foreseen || g.epoch != epoch {
		return // explained, or one more answer from a cycle already refused
	}
	if hinted {
		l.distrustFor = min(max(2*l.distrustFor, distrustMin), distrustMax)
		l.distrustUntil = now + l.distrustFor
	}
	if l.pending {
		return // refused again before the window ended: it is longer
	}
	if l.quota != nil {
		l.growGap = min(2*max(minGrowGap, l.growGap), maxGrowGap)
	}
	l.pending, l.pendCycle, l.pendFrom = true, g.cycle, l.cycleStart
	l.pendQ = 0
	if g.cycle == l.cycle && g.cycle != 0 {
		l.pendQ = l.cycleOK
	}
}
