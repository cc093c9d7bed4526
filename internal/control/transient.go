package control

import "time"

// DecideTransient is the decision on a transient failure (a connection
// error, a 502 or a 504), which the Transport retries only when asked to:
// given what it knows of the failure and of the request (r: Backoff is the
// request's next interval, Wait a Retry-After when Given, Retryable whether
// the request may be sent again), it returns the plan. The wait is the
// backoff interval, or Retry-After when that is longer (a floor); it
// belongs to the request alone and never pauses the key (only an outage
// does: see State.transient). The request is
// retried when it may be sent again, the wait fits within MaxWait and its
// context deadline, and the key's retry budget allows it: the same budget
// as refusals, which spaces a retry it cannot afford now out until it can,
// as it does for refusals (see Refusal.spaced), or for MaxWait if less,
// rather than dropping it, but in an outage (many refused or failed
// flights, no acceptance: see retryBudget.failed) or when neither fits
// the deadline: unlike a refusal's, such a retry is not sent at its own
// wait, for outside an outage a transient failure pauses no key and the
// budget alone spaces its retries. It changes nothing; Release applies
// the plan.
func DecideTransient(now time.Time, r *Refusal, rb retryBudget) Plan {
	p := Plan{Wait: max(r.Backoff, 0), Reason: ReasonTransient}
	if r.Given && r.Wait > p.Wait {
		p.Wait, p.Reason = r.Wait, ReasonRetryAfter
	}
	fits := func(d time.Duration) bool { return r.fits(now, d) }
	if !r.Retryable || !fits(p.Wait) {
		return p
	}
	n := instant(now)
	p.Retry, p.Denied = rb.allows(n)
	if p.Denied == ReasonRetryBudget && !rb.outage() {
		// Spaced out until the budget affords it, as a refusal's retry
		// is (see Refusal.spaced), or for MaxWait, if less and within
		// the deadline: dropped, 45 of a flight of 100 answered 502
		// once went back to the caller at a MaxWait of 8 s. But not
		// sent at its own wait when neither fits, as a refusal's is
		// (nor half way to MaxWait: the retries spaced so went together,
		// and held those the budget spaced after them; at MaxWait, those
		// that wake together and find the key busy fail): a transient failure pauses no key, and the
		// budget is all that spaces its retries (sent so, 20 callers
		// with deadlines of 3 s against a gateway failing for a minute
		// sent 2.4 requests each, where the budget allows 1.3).
		d, spaced := r.spaced(now, rb, p.Wait)
		if !spaced && r.fits(now, r.MaxWait) {
			d, spaced = r.MaxWait, true
		}
		if spaced {
			if d > p.Wait {
				p.Wait, p.Reason = d, ReasonRetryBudget
			}
			p.Retry, p.Denied = true, ReasonNone
		}
	}
	return p
}

// transient applies the decision on a transient failure of the request l:
// the failure counts in the run of failed flights that makes an outage
// (see retryBudget.failed), and a retry spends one from the retry budget.
// In an outage, a failure that counts pauses the key as a refusal that
// gives no wait does there (see Decide), doubled with each flight since
// the outage began, up to BackoffMax, and spread: dropped, the retries
// left the callers' next requests going at the rate of their loops (50
// callers with a second of work between two, against a gateway failing
// for minutes, sent 5,598 requests in 2m17s where they sent 951 in 2m30s
// with every retry sent), for a transient failure pauses nothing else.
// Nothing else changes.
func (s *State) transient(t time.Time, now int64, cfg *Config, r *Refusal, l *Lease, rnd uint64) Plan {
	if s.retry.failed(s.grantOf(l), s.seq, now) && s.retry.outage() {
		s.pause(now, addSat(now, int64(spread(rnd, floorWait(0, s.retry.run-outageRun)))), ReasonTransient)
	}
	p := DecideTransient(t, r, s.retry)
	if p.Retry && !r.fits(t, max(p.Wait, time.Duration(s.spaced(cfg, s.pauseUntil)-now))) {
		// The key is paused already, by another answer, by this one's
		// outage, or Config.MaxRate spaces its next start, past what
		// the request may wait: it would fail waiting, its failure
		// drained. The failure goes back to the caller instead, as a
		// refusal does (see release).
		p.Retry = false
	}
	if p.Retry {
		s.retry.take(now)
	}
	return p
}
