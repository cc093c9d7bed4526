package control

import (
	"math"
	"math/bits"
	"time"
)

// RefusalFloor is the least wait before a refused request is sent again,
// whatever the server said: a Retry-After of 0, or a reset already past,
// is no invitation to resend at once. Other requests to its key wait it
// too, unless the refusal was a learned step's overdraw (see
// learner.refused) or a bare refusal tried as one of no rate (see
// shed.go), whose next request probes at once. A positive wait below it, which only a field of finer grain
// can state (retry-after-ms, a reset of "120ms"), is honoured once; each
// further refusal in a row that gives a wait below the floor doubles it,
// up to BackoffMax, as a refusal that gives no wait does.
const RefusalFloor = time.Second

// Decide is the refusal decision, in one place: given what the Transport
// knows of a refused response and of its request (r), the request's lease
// (l), the key's retry budget (rb) and a random value for jitter, it
// returns the plan the Transport executes. It changes nothing; Release
// applies the plan to the state.
//
// The wait is the server's when it gave one (Retry-After, else the reset of
// a spent quota), and a floor: jitter of the server's wait only lengthens
// the pause, is added after the wait was judged, never carries it past
// MaxWait, and takes at most half of the time the deadline leaves after
// the wait. A wait
// below RefusalFloor is raised to it, and doubled for each refusal in a
// row before it that gave one too. Without one, it is the request's next
// backoff interval or the floor doubled for each refusal in a row before
// it that gave no wait or a short one, whichever is longer (fresh requests
// do not each start again at a second), shortened at the end of a window (the first probe is
// not put off by the request's earlier refusals) and while the learner
// measures the key (a probe after half the time it has refused so far, so
// that the window is known to within half of itself). The floor and its
// doublings, where they are the wait and outside those two cases, are
// spread at random (see spread), and so is an outage's pause.
//
// The request is retried when it may be sent again, the wait fits within
// MaxWait and its context deadline, and the server did not report abnormal
// usage. A retry the retry budget cannot afford now is spaced out: its
// wait is lengthened until the budget can (Reason ReasonRetryBudget), when
// that fits MaxWait and half of what the deadline leaves; when it does
// not, or when the budget owes all it may, it keeps its wait (see
// Refusal.spaced). Only in an outage (many refused flights in a row, no
// acceptance) does the budget deny retries: the refusal goes back to the
// caller, and a refusal that gives no wait pauses the key as short waits
// in a row do.
func Decide(now time.Time, r *Refusal, l *Lease, rb retryBudget, rnd uint64) Plan {
	n := instant(now)
	j := rng(rnd)
	p := Plan{Wait: max(r.Wait, 0), Reason: r.Reason}
	// Jitter carries a wait past MaxWait never, and takes at most half
	// the time the deadline leaves after the wait: a retry judged to fit
	// must still have time to go once the key has paused.
	limit := func(wait time.Duration) int64 {
		l := max(wait, r.MaxWait)
		if !r.Deadline.IsZero() {
			l = min(l, wait+max(r.Deadline.Sub(now)-wait, 0)/2)
		}
		return int64(l)
	}
	judged := p.Wait // the wait the retry is judged by, before its jitter
	if f, raised, own := leastWait(n, r, l, rb.streak); raised {
		p.Wait, p.Reason, judged = f, ReasonBackoff, f
		if own {
			// The floor, or the floor doubled, is spread (see spread),
			// so that clients refused together do not come back
			// together; a refusal that gave no wait never below the
			// request's own backoff (a refusal a tokens quota explains
			// has a wait, whatever backoff the Transport set).
			w := spread(rnd, f)
			if !r.Given {
				w = max(w, r.Backoff)
			}
			p.Wait = time.Duration(min(int64(w), limit(f)))
		}
	}
	p.Pause = p.Wait
	if r.Given && p.Reason != ReasonBackoff {
		p.Pause = time.Duration(min(addSat(int64(p.Wait), j.jitter(int64(p.Wait/10))), limit(p.Wait)))
	}
	if !r.Given && rb.outage() {
		// In an outage a refusal that gives no wait pauses the key as a
		// wait below the floor does, doubled with each refused flight
		// since the outage began, up to BackoffMax, whatever waits
		// those flights gave: the key's floor above doubles only with
		// the refusals that gave none, or a short one.
		// Spread as the floor is above: clients refused together by an
		// outage would otherwise probe it together for as long as it
		// lasts.
		p.Pause = max(p.Pause, spread(rnd, floorWait(0, rb.run-outageRun)))
	}
	if p.Reason == ReasonBackoff {
		if d, least := stretch(now, n, r, l); d > p.Wait {
			// The request's own wait: the key's pause stays the
			// learner's, and other requests probe at its pace; it
			// ends once one of them is accepted.
			p.Least = max(p.Wait, least)
			p.Wait, judged, p.Probed = d, d, l.measuring
		}
	}
	fits := func(d time.Duration) bool { return r.fits(now, d) }
	want := r.Retryable && fits(judged)
	if r.Stop {
		p.Stop = true
		return p
	}
	if !want {
		return p
	}
	p.Retry, p.Denied = rb.allows(n)
	switch {
	case p.Denied == ReasonStopped:
	case rb.outage():
		// Many refused flights, no acceptance: retries would only add
		// to the load. The refusal goes back to the caller; first
		// attempts still probe, one a pause.
		p.Retry, p.Denied = false, ReasonRetryBudget
	case p.Denied != ReasonNone:
		// Owing all it may (see retryBudget.take), the budget would
		// hold each retry past that as long as the last one owed: all
		// together, with no time left for the key's probe and ramp
		// before a deadline. Such a retry keeps its own wait, as one
		// spaced past MaxWait or the deadline does (see spaced).
		if d, ok := r.spaced(now, rb, judged); ok && d > p.Wait && !rb.owesAll(n) && r.roomy(now, judged, d) {
			// The budget's spacing, which no acceptance ends: a
			// probe's wait lengthened is no longer (see stretch).
			p.Wait, p.Reason, p.Probed, p.Least = d, ReasonRetryBudget, 0, 0
		}
		p.Retry, p.Denied = true, ReasonNone
	}
	return p
}

// spaced returns the wait of a retry the budget rb cannot afford now,
// outside an outage, whose own wait, which fits, is wait: until the budget
// affords it, when that fits MaxWait and the deadline; or else its own
// wait, and ok false. Outside an outage the budget spaces retries, it does
// not drop them: dropped, half of a flight of 100 refused together with
// Retry-After: 1 went back to the caller at a MaxWait of 5 s, and as many
// at a context deadline of 8 s (an http.Client's Timeout), though the
// server served each retry a second later.
//
// A refusal's retry the budget cannot so space keeps its own wait, the
// key's pause, probe and ramp spacing it from there as they space first
// attempts (see Decide): spaced to MaxWait, the retries so spaced woke
// together with no wait left for the key's probe and ramp, and failed at
// once (63 of such a flight at 100 ms of latency, 23 of them never
// served); spaced half way to MaxWait, they went together still, and held
// the retries the budget spaced after them. A transient failure's goes to
// MaxWait (see DecideTransient): no pause spaces its retries.
func (r *Refusal) spaced(now time.Time, rb retryBudget, wait time.Duration) (d time.Duration, ok bool) {
	if d = max(wait, rb.next(instant(now))); r.fits(now, d) {
		return d, true
	}
	return wait, false
}

// roomy reports whether a refusal's retry spaced by the budget from its
// own wait to d leaves its answer time before the deadline: half of what
// the deadline leaves after wait. Spaced to within a moment of it, a
// retry was sent with no time left to answer, and failed with the
// context's error.
func (r *Refusal) roomy(now time.Time, wait, d time.Duration) bool {
	return r.Deadline.IsZero() || d <= wait+max(r.Deadline.Sub(now)-wait, 0)/2
}

// leastWait returns the wait Decide plans for the refusal r of the
// request l at now, before its jitter, with streak short waits in a row
// before it, when it is not the server's own: raised reports that it is
// the backoff, or a wait below RefusalFloor raised to the floor; own, that
// it is the floor or the floor doubled for the streak, which Decide
// spreads: not the request's own backoff (randomised already), nor a wait
// shortened at the end of a window or by the learner's measurement, whose
// instants are what they are for.
func leastWait(now int64, r *Refusal, l *Lease, streak int32) (d time.Duration, raised, own bool) {
	switch {
	case !r.Given:
		// The request's own backoff, and the key's: refusals in a row
		// that gave no wait (or one below the floor) double it, whatever
		// request they refused, so that fresh requests, each at its
		// first backoff, do not probe a refusing key every second.
		f := floorWait(0, streak)
		d = max(r.Backoff, f)
		if l.window {
			d = min(d, BackoffInitial)
		}
		if l.measuring != 0 {
			d = min(d, time.Duration(now-l.measuring)/2)
		}
		d = max(d, RefusalFloor)
		// The floor itself is not spread here: the request's own
		// backoff, drawn around it, lengthens it half the time.
		return d, true, d == f && f > max(r.Backoff, RefusalFloor) && !l.window && shortens(f, l)
	case r.Wait < RefusalFloor:
		w := max(r.Wait, 0)
		f := floorWait(w, streak)
		d = f
		if l.window && l.unrefused {
			// At the end of a window: the floor, not doubled by the
			// refusals of the request's own flight. Not once a flight
			// was refused since the window's acceptances: a server
			// that accepted one request stating its quota spent and
			// reset "now", and then refused every request so, was
			// sent one a second for as long as it refused (its
			// cycle, with no pause that renews it, kept its
			// acceptance).
			d = min(d, BackoffInitial)
		}
		if l.measuring != 0 {
			// The learner measures the window: as for a refusal that
			// gives no wait, but never below the floor.
			d = min(d, max(RefusalFloor, time.Duration(now-l.measuring)/2))
		}
		return d, d > w, d == f && d > w && !(l.window && l.unrefused) && shortens(f, l)
	}
	return r.Wait, false, false
}

// stretch returns the wait of the refused request l, the learner's probe
// (l.measuring), that spreads the attempts it has left evenly, on a
// logarithmic scale, over the time refused so far and half the most it
// may still wait (MaxWait, or half of what its deadline leaves), each wait
// at most twice the time refused so far: MaxWait counts from the refusal,
// and the other half is for the learned window's pace that follows
// (spread to all of MaxWait, a probe woken once another request was
// accepted found its next start past it). The time refused so far is the
// measurement's, or the request's own since its first refusal when
// longer. The learner's own pace, a probe after half the time refused so
// far, spends 8 attempts (MaxAttempts' default) in about 34 s, and a
// request that was the probe each time was given up before a window of a
// minute had ended, though the server would have served it within
// MaxWait; spread so, they reach 5 minutes from a measurement a second
// long. Zero when the request is no probe, or when its attempts left
// reach that far at the learner's pace anyway.
//
// The key is not held so long, and the wait ends once the measurement has
// (Plan.Probed), but not before least: the time the request has been
// refused from which the attempts it has left after this one, spread so,
// still reach as far; all of the wait for its last attempt. Woken at once
// by another's acceptance, a request was sent into the window that
// acceptance began, spent if it was a token bucket's refill: against a
// bucket of 10 refilled over 2 or 5 minutes, two, three and four callers
// lost 47 to 156 tasks in 200 runs, each given up after its 8 attempts
// were refused within a minute or so (now 0 to 5). The time is the request's own, for the
// measurement that woke it has ended and the next begins anew: counted
// from that measurement's start, a request refused a second after it
// joined one begun 100 s before could be woken at once, and its two
// attempts left reached 18 s. An acceptance after such a wait bounds the
// window from above only (see learner.accepted).
//
// A request the learner's measurement did not hold when granted, refused
// again, waits the learner's pace, as any first probe does, whatever its
// attempts left: lengthened from the first refusal of each measurement,
// two callers against a fixed window of 2 minutes each waited for the
// other's probe, which none sent, and ran 20% longer.
func stretch(t time.Time, now int64, r *Refusal, l *Lease) (d, least time.Duration) {
	var own int64 // the request's own time refused
	if !r.Since.IsZero() {
		own = max(int64(t.Sub(r.Since)), 0)
	}
	e := max(now-l.measuring, own)
	if l.measuring == 0 || e <= 0 || !r.Retryable || r.Left <= 0 {
		return 0, 0
	}
	b := min(r.MaxWait, MaxPause)
	if !r.Deadline.IsZero() {
		b = min(b, r.Deadline.Sub(t)/2)
	}
	b /= 2
	if b <= 0 {
		return 0, 0
	}
	f := min(math.Pow((float64(e)+float64(b))/float64(e), 1/float64(r.Left)), stretchRatio)
	d = time.Duration(min(float64(e)*(f-1), float64(b)))
	least = d // its last attempt: all of it
	if n := r.Left - 1; n > 0 {
		// Woken early, the n attempts it has left after this one must
		// still reach as far: from a time refused of b/(stretchRatio^n
		// - 1) at least, its own, for the measurement that woke it has
		// ended, and the next begins anew.
		from := float64(b) / (math.Pow(stretchRatio, float64(n)) - 1)
		least = time.Duration(min(max(from-float64(own), 0), float64(d)))
	}
	return d, least
}

// stretchRatio bounds the time measured after a probe stretch lengthens
// the wait of, in times the time measured before it: a lone caller's
// request with one attempt left, refused a second into the measurement
// of a window of 2 s, would otherwise wait all of MaxWait (10 minutes)
// for its last, and one whose MaxWait is a century, decades. A request
// with fewer attempts reaches less far: with 3 (MaxAttempts), 4 s.
const stretchRatio = 3

// shortens reports whether spread may move the wait f of the request l:
// always, but while the learner measures a window, whose probe goes after
// half the time refused so far at most; then only when spread shortens f.
func shortens(f time.Duration, l *Lease) bool {
	return l.measuring == 0 || !lengthens(f)
}

// lengthens reports whether spread lengthens the wait d rather than
// shortening it: the floor, and the doubling's cap.
func lengthens(d time.Duration) bool { return d-d/4 < RefusalFloor || d >= BackoffMax }

// MayRetry reports whether Decide could plan to retry the refusal r of the
// request l at now, on a state whose short waits in a row are not known:
// whether r may be retried at all, and the least wait Decide can choose
// (the server's, or the refusal floor) fits within MaxWait and the
// deadline. When it does not, the refusal goes back to the caller whatever
// else is known, and its body need not be read. [State.MayRetry] knows
// the streak.
func MayRetry(now time.Time, r *Refusal, l *Lease) bool {
	d, _, _ := leastWait(instant(now), r, l, 0)
	return r.Retryable && r.fits(now, d)
}

// MayRetry is the package's MayRetry on this state, whose short waits in
// a row double the floor, and whose pause and Config.MaxRate's spacing
// hold a retry as long: it reports false for a refusal whose doubled
// floor does not fit, or when another answer paused the key, or cfg's
// MaxRate spaces its next start, past what the request may wait (Release
// then hands the refusal back: see its check of the pause). It does not
// ask the retry budget: in an outage or a stop Decide hands the refusal
// back, but its problem document is read all the same, for a report of
// abnormal usage there starts or renews the stop (the outage ends with
// the next acceptance).
func (s *State) MayRetry(now time.Time, cfg *Config, r *Refusal, l *Lease) bool {
	n := instant(now)
	d, _, _ := leastWait(n, r, l, s.retry.streak)
	return r.Retryable && r.fits(now, max(d, time.Duration(s.spaced(cfg, s.pauseUntil)-n)))
}

// fits reports whether a retry after the wait d from now fits within
// MaxWait and before the deadline: a retry that could go only as the
// deadline passes would fail with the context's error, the refusal lost.
func (r *Refusal) fits(now time.Time, d time.Duration) bool {
	if r.Held.After(now) {
		d = max(d, r.Held.Sub(now))
	}
	return d <= r.MaxWait && (r.Deadline.IsZero() || now.Add(d).Before(r.Deadline))
}

// floorWait returns the least wait after a refusal that gave the wait d,
// below RefusalFloor, with streak such refusals in a row before it: the
// floor for a wait of zero, d itself the first time for a positive one,
// then the floor doubled for each refusal of the streak, up to BackoffMax.
func floorWait(d time.Duration, streak int32) time.Duration {
	k := streak
	if d > 0 {
		if k == 0 {
			return d
		}
		k--
	}
	return min(RefusalFloor<<min(k, 16), BackoffMax)
}

// spread returns the wait d, the refusal floor or a doubling of it up to
// BackoffMax (not the server's wait), moved at random by up to a quarter
// of itself, so that clients refused together come back apart: the floor
// (which leastWait spreads for a short wait the server gave only)
// lengthened (1 to 1.25 s), since no wait is shorter, and the doubling's
// cap lengthened (1 to 1.25 min), so that a long outage is probed no more
// often than the cap says; a doubling below the cap shortened (6 to 8 s
// for 8 s), so that a server back from an outage is found no later than
// the doubling alone finds it. rnd is the decision's random value, whose
// share of its range is the share of the quarter taken: zero leaves d as
// it is (whatever else the decision draws), and the two waits a decision
// may spread, the request's and an outage's pause, move alike.
func spread(rnd uint64, d time.Duration) time.Duration {
	d = max(d, 0)
	r, _ := bits.Mul64(rnd, uint64(d/4)+1)
	if lengthens(d) {
		return time.Duration(addSat(int64(d), int64(r)))
	}
	return d - time.Duration(r)
}

// shortWait reports whether a refusal gave no wait, or one below the
// refusal floor: the refusals the floor doubles with.
func shortWait(r *Refusal) bool { return !r.Given || r.Wait < RefusalFloor }
