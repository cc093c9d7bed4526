package polite

import "time"

// learner infers what an origin allows from what it accepts and refuses,
// for servers that say little or nothing about their limits, or say more
// than they grant. The rules (a hint is not a grant):
//
//   - A refusal the headers did not foresee (no quota in it is spent) starts
//     a measurement: the requests the server accepted since the last pause
//     are its quota, and the time from the first of them until the origin
//     accepts a request again is its window. A fixed window reveals q and w
//     this way; a token bucket reveals its refill.
//   - The learned quota paces the origin like a stated one (no more than q
//     starts in any span of w), on top of whatever the headers say, and
//     never shortens a wait the server asked for.
//   - Each time the learned quota has held requests back for two windows
//     without a refusal, it grows by an eighth (at least one): speed comes
//     back when refusals stop. A new refusal measures it again, and doubles
//     the windows to wait before the next growth, up to 4. A measurement
//     lowers a learned quota by 30% at most at a time: a cycle measured out
//     of phase with the server's window must not cut the pace to nothing.
//   - A refusal while the headers said quota was left marks them
//     unreliable: the learned quota applies for a minute, doubling each time
//     they are caught again, up to an hour. Without such a mark, a learned
//     quota applies only while the origin states no quota of its own.
type learner struct {
	// A cycle is a burst of starts: it begins after a pause, or once the
	// learned quota has held requests back a learned window after the
	// cycle began.
	cycle      uint64    // cycles so far
	cycleEpoch uint64    // the origin epoch the cycle began in
	cycleStart time.Time // its first start
	cycleOK    int64     // its requests answered without refusal
	held       bool      // the learned quota held a request back since the cycle began

	pending   bool   // a measurement waits for the next acceptance
	pendCycle uint64 // the cycle refused
	pendQ     int64
	pendFrom  time.Time

	quota   *policy // learned; nil until a measurement ends
	binding bool    // the learned quota held a request back since it last grew
	grownAt time.Time
	growGap int // learned windows between growths: doubles with each refusal of a learned quota

	hinted        bool // the origin has sent a quota that paces requests
	distrustUntil time.Time
	distrustFor   time.Duration

	rampAcc int // additive ramp-up for origins that never sent a quota

	// Retry budget: retries may use a fifth of recent traffic, with a
	// floor of retryFloor a second, so that retries cannot multiply an
	// outage (the Finagle and Envoy budgets).
	retryTokens  float64
	retryAt      time.Time
	noRetryUntil time.Time // the server reported abnormal usage
}

const (
	distrustMin   = time.Minute
	distrustMax   = time.Hour
	retryShare    = 0.2 // of first attempts
	retryFloor    = 2.0 // retries a second, always allowed
	retryTokenCap = 20.0
	stopRetrying  = 10 * time.Minute // after abnormal usage was reported
	minGrowGap    = 2                // learned windows between growths, at least
	maxGrowGap    = 4                // and at most
)

// active reports whether the learned quota paces requests now.
func (l *learner) active(o *origin, now time.Time) bool {
	if l.quota == nil {
		return false
	}
	if now.Before(l.distrustUntil) {
		return true
	}
	for _, p := range o.policies {
		if p.unit != unitConcurrent && (p.live || (p.q > 0 && p.w > 0)) {
			return false
		}
	}
	return true
}

// started records a granted request and returns its cycle.
func (l *learner) started(o *origin, now time.Time) uint64 {
	renew := l.held && l.quota != nil && now.Sub(l.cycleStart) >= l.quota.w
	if l.cycleEpoch != o.epoch || l.cycleStart.IsZero() || renew {
		l.cycle++
		l.cycleEpoch, l.cycleStart, l.cycleOK, l.held = o.epoch, now, 0, false
	}
	if l.quota != nil {
		l.quota.logStart(now)
	}
	return l.cycle
}

// accepted records a response that was not a refusal.
func (l *learner) accepted(o *origin, g grant, now time.Time) {
	if g.cycle == l.cycle {
		l.cycleOK++
	}
	if !l.pending {
		if q := l.quota; q != nil && l.binding && now.Sub(l.grownAt) >= time.Duration(max(minGrowGap, l.growGap))*q.w {
			q.q += max(1, q.q/8)
			l.grownAt, l.binding = now, false
		}
		return
	}
	if g.cycle <= l.pendCycle {
		if g.cycle == l.pendCycle {
			l.pendQ++ // accepted in the refused cycle, answered late
		}
		return
	}
	// The origin accepts again: the measurement ends.
	l.pending = false
	if l.pendQ < 1 {
		return
	}
	w := now.Sub(l.pendFrom)
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
	l.quota.q, l.quota.w = q, w
	l.quota.log = l.quota.log[:0]
	for range min(int64(o.inflight)+1, q) {
		l.quota.logStart(now)
	}
	l.grownAt, l.binding = now, false
}

// refused records a refusal. foreseen reports whether a quota in the
// response was spent; hinted whether the response or a live observation
// said quota was left.
func (l *learner) refused(o *origin, g grant, now time.Time, foreseen, hinted bool) {
	if foreseen || g.epoch != o.epoch {
		return // explained, or one more answer from a cycle already refused
	}
	if hinted {
		l.distrustFor = min(max(2*l.distrustFor, distrustMin), distrustMax)
		l.distrustUntil = now.Add(l.distrustFor)
	}
	if l.pending {
		return // refused again before the window ended: it is longer
	}
	if l.quota != nil {
		l.growGap = min(2*max(minGrowGap, l.growGap), maxGrowGap)
	}
	l.pending, l.pendCycle, l.pendFrom = true, g.cycle, l.cycleStart
	l.pendQ = 0
	if g.cycle == l.cycle {
		l.pendQ = l.cycleOK
	}
}

// ramp grows the number of requests in flight after an answer: tripling
// each round trip for an origin that states its quotas, by one each round
// trip for one that never did, since only a refusal will tell where its
// limit is.
func (l *learner) ramp(o *origin) {
	if o.cwnd <= 0 || o.probing {
		return
	}
	step := 2 // tripling each round trip
	if !l.hinted {
		if l.rampAcc++; l.rampAcc < o.cwnd {
			return
		}
		l.rampAcc, step = 0, 1
	}
	if o.cwnd += step; o.cwnd >= rampCap {
		o.cwnd = 0
	}
}

// deposit adds a first attempt's share to the retry budget.
func (l *learner) deposit(now time.Time) {
	l.refill(now)
	l.retryTokens = min(retryTokenCap, l.retryTokens+retryShare)
}

// refill adds the floor's retries for the time since the last call.
func (l *learner) refill(now time.Time) {
	if !l.retryAt.IsZero() && now.After(l.retryAt) {
		l.retryTokens = min(retryTokenCap, l.retryTokens+retryFloor*now.Sub(l.retryAt).Seconds())
	} else if l.retryAt.IsZero() {
		l.retryTokens = retryFloor
	}
	l.retryAt = now
}

// allowRetry reports whether the origin allows one more retry now, and
// takes it from the retry budget; or why not.
func (l *learner) allowRetry(now time.Time) (bool, Reason) {
	if now.Before(l.noRetryUntil) {
		return false, ReasonStopped
	}
	l.refill(now)
	if l.retryTokens < 1 {
		return false, ReasonRetryBudget
	}
	l.retryTokens--
	return true, ""
}
