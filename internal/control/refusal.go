package control

import "time"

// Decide is the refusal decision, in one place: given what the Transport
// knows of a refused response and of its request (r), the request's lease
// (l), the key's retry budget (rb) and a random value for jitter, it
// returns the plan the Transport executes. It changes nothing; Release
// applies the plan to the state.
//
// The wait is the server's when it gave one (Retry-After, else the reset of
// a spent quota), and a floor: jitter only lengthens the pause, is added
// after the wait was judged, and never carries it past MaxWait. Without
// one, it is the request's next backoff interval, shortened at the end of a
// window (the first probe is not put off by the request's earlier
// refusals) and while the learner measures the key (a probe after half the
// time it has refused so far, so that the window is known to within half of
// itself). The request is retried when it may be sent again, the wait fits
// within MaxWait and its context deadline, the server did not report
// abnormal usage, and the retry budget allows it.
func Decide(now time.Time, r *Refusal, l *Lease, rb retryBudget, rnd uint64) Plan {
	n := instant(now)
	p := Plan{Wait: max(r.Wait, 0), Reason: r.Reason}
	if !r.Given {
		p.Wait, p.Reason = max(r.Backoff, 0), ReasonBackoff
		if l.window {
			p.Wait = min(p.Wait, BackoffInitial)
		}
		if l.measuring != 0 {
			p.Wait = min(p.Wait, max(BackoffInitial/4, time.Duration(n-l.measuring)/2))
		}
	}
	p.Pause = p.Wait
	if r.Given {
		j := rng(rnd)
		p.Pause = time.Duration(min(addSat(int64(p.Wait), j.jitter(int64(p.Wait/10))), max(int64(p.Wait), int64(r.MaxWait))))
	}
	want := r.Retryable && p.Wait <= r.MaxWait &&
		(r.Deadline.IsZero() || !now.Add(p.Wait).After(r.Deadline))
	if r.Stop {
		p.Stop = true
		return p
	}
	if want {
		p.Retry, p.Denied = rb.allows(n)
	}
	return p
}
