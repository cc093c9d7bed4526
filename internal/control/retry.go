package control

import "time"

// retryBudget keeps one invariant: retries to a key stay a share of its
// traffic. Retries may use a fifth of recent first attempts, with a floor
// of retryFloor a second, so that retries cannot multiply an outage (the
// Finagle and Envoy retry budgets); a report of abnormal usage stops them
// for a while.
//
// The budget spaces retries out rather than dropping them: a retry it
// cannot afford now waits until it can (see Decide), unless the key is in
// an outage, many refused flights and no acceptance, where retries would
// only add to the load, and the refusal goes back to the caller.
//
// It also counts the refused flights since the key's last acceptance (the
// refusals of requests in flight together count once, the first of them):
// all of them (run, for the outage), and those that gave no wait or one
// below the refusal floor (streak, which the floor doubles with).
type retryBudget struct {
	tokens    float64
	at        int64 // last refill; zero: never
	stopUntil int64 // the server reported abnormal usage

	run    int32 // refused (or failed: see failed) flights since the last acceptance
	streak int32 // of them, those that gave no wait or one below RefusalFloor

	// When a transient failure last counted as a flight (see failed):
	// the key's grants then, and the instant; 0: none.
	failSeq uint64
	failAt  int64
}

const (
	retryShare    = 0.2 // of first attempts
	retryFloor    = 2.0 // retries a second, always allowed
	retryTokenCap = 20.0
	stopRetrying  = 10 * time.Minute // after abnormal usage was reported
	// outageRun is how many refused flights with no acceptance between
	// make an outage, where the budget drops retries instead of spacing
	// them out: the server refused again after each wait it asked for
	// (or each backoff), 39 times. Neither one request's own attempts
	// (MaxAttempts, 8 by default) nor the learner's probes measuring one
	// window (their waits growing by half, about 15 a window of any
	// length) make one. Counted by refusal, one flight of 100 in flight
	// refused once made an outage, and a one-second blip failed 60 tasks;
	// at 5 flights, a lone request's MaxAttempts was cut at 6, and a bare
	// 429's window of a minute failed tasks.
	outageRun = 40
	maxRun    = 1 << 16
)

// deposit adds a first attempt's share.
func (r *retryBudget) deposit(now int64) {
	if r.at != 0 && r.tokens >= retryTokenCap {
		// Full, as a key that is seldom refused nearly always is: the
		// refill and the share leave it full (depositFull checks).
		r.tokens, r.at = retryTokenCap, now
		return
	}
	r.depositFull(now)
}

// depositFull is deposit without its shortcut for a full budget.
func (r *retryBudget) depositFull(now int64) {
	r.refill(now)
	r.tokens = min(retryTokenCap, r.tokens+retryShare)
}

// refill adds the floor's retries for the time since the last call.
func (r *retryBudget) refill(now int64) {
	switch {
	case r.at == 0:
		r.tokens = retryFloor
	case now > r.at:
		r.tokens = min(retryTokenCap, r.tokens+float64(now-r.at)*(retryFloor/float64(time.Second)))
	}
	r.at = now
}

// allows reports whether one more retry may go now; or why not. It does
// not change r.
func (r retryBudget) allows(now int64) (bool, Reason) {
	if now < r.stopUntil {
		return false, ReasonStopped
	}
	r.refill(now)
	if r.tokens < 1 {
		return false, ReasonRetryBudget
	}
	return true, ReasonNone
}

// next returns how long from now until the budget can afford one more
// retry: 0 if it can now. Spent tokens come back at retryFloor a second.
func (r retryBudget) next(now int64) time.Duration {
	r.refill(now)
	if r.tokens >= 1 {
		return 0
	}
	d := time.Duration((1 - r.tokens) / retryFloor * float64(time.Second))
	return (d + time.Millisecond - 1).Truncate(time.Millisecond) // never early by a rounding error
}

// owesAll reports whether the budget owes all it may at now (within half
// a retry of retryTokenCap: what comes back in a quarter of a second): a
// retry taken now would wait as long as the last one owed.
func (r retryBudget) owesAll(now int64) bool {
	r.refill(now)
	return r.tokens < 0.5-retryTokenCap
}

// outage reports whether the key is in an outage: many refused flights,
// and no acceptance between them.
func (r retryBudget) outage() bool { return r.run >= outageRun }

// take spends one retry. The tokens may go below zero: a retry spaced out
// spends a token that has not come back yet. The budget owes at most
// retryTokenCap: a refusal's retry past that keeps its own wait, the
// key's pause, probe and ramp spacing it (see Decide), and a transient
// failure's waits as the last one owed does. Owing without
// bound, the tail of one large flight was spaced past MaxWait and failed
// (64 of 100 after a one-second blip), and the debt of retries whose
// callers gave up held others' retries for minutes.
func (r *retryBudget) take(now int64) {
	r.refill(now)
	r.tokens = max(-retryTokenCap, r.tokens-1)
}

// accepted records an acceptance: the refusals in a row end, and the mark
// of the last flight counted with them, so that a key accepted since
// carries no tail for it (see encoder.tails).
func (r *retryBudget) accepted() { r.run, r.streak, r.failSeq, r.failAt = 0, 0, 0, 0 }

// refused records a refusal at now of the request granted as the key's
// seq-th, when the key had granted grants; first reports that it is the
// first answer of the requests sent since the last one (the refusals of
// requests in flight together count once), and short that it gave no
// wait, or one below the refusal floor. Nor does it count when the
// request was granted before the last transient failure counted (see
// failed), and a flight it counts is one transient failures count no
// more: counted by both, a flight some of whose requests failed and the
// others were refused counted twice.
func (r *retryBudget) refused(first, short bool, seq, grants uint64, now int64) {
	if !first || seq <= r.failSeq {
		return
	}
	r.failSeq, r.failAt = grants, now
	r.run = min(r.run+1, maxRun)
	if short {
		r.streak = min(r.streak+1, maxRun)
	}
}

// failed records a transient failure (see State.transient) of the request
// granted as the key's seq-th, at now, when the key had granted grants,
// and reports whether it counted as a flight in the run that makes an
// outage: when the request was granted after the last failure counted,
// and at least RefusalFloor after it, or more than skewMax before it (a
// clock stepped back, or an instant a store held from a process whose
// clock is that far ahead, stopped the count for as long; within skewMax,
// a process whose clock is behind another's sharing the key counts no
// flight until its clock passes the other's count, or each counted at
// once, and reset the mark for the other to count again: 43 flights in
// 15 s at 900 ms apart). The failures of requests in flight
// together count once, as refusals do, whose flights the key's pause
// tells apart, a second apart at least (a transient failure pauses the
// key only in an outage: see State.transient); counted a round trip
// apart, 40 round trips of a gateway's blip of 502s (four seconds at
// 100 ms of latency) would make an outage. Counted nowhere, failures never made an outage, and the
// budget, which owes at most retryTokenCap, never dropped a retry: past
// what it owes each waited as long as the last one owed, and with no
// deadline near, every request to a gateway failing for minutes was sent
// MaxAttempts times, retries at the rate of the failures.
func (r *retryBudget) failed(seq, grants uint64, now int64) bool {
	if seq <= r.failSeq || (r.failAt != 0 && now >= r.failAt-int64(skewMax) && now < addSat(r.failAt, int64(RefusalFloor))) {
		return false // (a clock gone back beyond skewMax counts: it held the count for as long)
	}
	r.run = min(r.run+1, maxRun)
	r.failSeq, r.failAt = grants, now
	return true
}

// left returns the number of retries allowed now.
func (r retryBudget) left(now int64) int {
	if now < r.stopUntil {
		return 0
	}
	r.refill(now)
	return max(0, int(r.tokens))
}
