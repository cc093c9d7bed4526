package polite

import "time"

// Restraint holds back a Transport's requests to origins that state no
// rate limit, as a considerate crawler does: such an origin has at most
// MaxConcurrency of them in flight at once and, with Adaptive, fewer while
// its latency shows that it queues them.
//
// An origin (a budget key) states a quota when one of its responses
// carries a rate-limit field the Transport reads (RateLimit,
// RateLimit-Policy, a legacy or vendor dialect) of a quota that paces the
// request answered: one of requests, of requests in flight or of content
// bytes, or one in a unit the request costs something in (see [Cost]),
// that bounds something alone: a remaining count, or a positive limit of
// requests with its window (of requests in flight, a positive limit
// alone). A limit with no
// window and no remaining count (X-RateLimit-Limit without its fellows, a
// RateLimit-Policy with no w), or a limit in another unit with no
// remaining count, lifts nothing. A
// quota of "widgets", of "tokens" to a request that declares none, or of
// "points" (GitHub's GraphQL API, Linear's complexity) or "api-units"
// (RapidAPI) to a request whose Cost names no such unit, bounds nothing
// the request sends, and leaves Restraint as it was; once a request that
// costs something in it is answered, the key is lifted for all. From
// then on the quotas it states pace it, and Restraint no longer applies to
// it, until the origin
// has gone unused (no request started, no quota stated) for the Budget's
// IdleTTL, or the longest window a quota of it stated if longer, when the
// budget forgets what it stated, or until the budget grants a request from
// a state that no longer knows it (forgotten by [Budget.Forget], evicted
// past MaxKeys, expired in a Store) or in which it paces nothing (a
// remaining count past its reset, a limit with no window, stated once and
// not since). Refusals,
// Retry-After, robots.txt and the other ceilings apply to every origin,
// with or without Restraint.
//
// Each Transport keeps Restraint for its own requests, like
// [Transport.MaxConcurrency]; what it learns of an origin is forgotten
// once the origin has been idle for a while and many others were seen (a
// quota's lift as above, unless more than 65,536 origins are kept). A
// Restraint is only read: Transports may share one. Its fields must not be
// changed after first use.
type Restraint struct {
	// MaxConcurrency is the most requests the Transport has in flight to
	// one origin that states no quota. If zero or negative, 4.
	MaxConcurrency int

	// Adaptive, if true, lowers an origin's limit below MaxConcurrency
	// when its latency rises well above its own baseline, before it
	// refuses anything, and raises it again as latency comes back (in the
	// manner of TCP Vegas and of Netflix's Gradient concurrency limits).
	// The latency of a request is the time from its start until its
	// response arrives; refusals and transport errors are not counted,
	// nor, with Transport.RetryTransient, the 502s and 504s it reads as
	// transient, nor an answer from a cache (an Age above 0; an error
	// too), which says nothing of the origin's. A 5xx answer counts only when slower than the smoothed
	// latency: an origin may answer its errors at once, whatever its
	// load. A request that timed out is an error, and is not counted.
	//
	// The limit starts at 4 (or MaxConcurrency, if lower), and the
	// origin's baseline is the mean latency of its first 64 responses
	// (of fewer, 8 at least, if 10 minutes pass first; with fewer still,
	// the measurement starts again), measured again every 5 minutes under
	// a light load: for at most 17 round trips, the limit is halved, and
	// at most 4, even when no answer comes to end the drain, and the
	// answers to requests sent within it count (those of drains with
	// fewer than 8 add up, if each follows the last within 10 minutes).
	// Once per round trip, if the smoothed latency is more than 1.5 times
	// the baseline, the limit comes down a quarter of the way towards one
	// and a half times what the origin serves without queueing; if it is
	// under 1.25 times the baseline, and at least half the limit is in
	// use, the limit grows by one.
	Adaptive bool
}

const (
	// defaultRestraint is Restraint.MaxConcurrency's default (see
	// DESIGN.md §9).
	defaultRestraint = 4
	// restraintInitial is where an adaptive limit starts: the load under
	// which the baseline is first measured.
	restraintInitial = 4
)

// limit returns the most requests in flight e's key may have under r at
// now, and under maxConc (0: none) too. With Adaptive, it creates e's
// gradient on first use, and ends a measurement whose end has passed:
// ended only by the next sample, a drain whose slots went to streams
// (answered, their bodies read for minutes) kept the limit halved for as
// long as they lasted, with nothing to sample.
func (r *Restraint) limit(e *ceiling, maxConc int, now time.Time) int {
	lim := r.MaxConcurrency
	if lim <= 0 {
		lim = defaultRestraint
	}
	if r.Adaptive {
		if e.grad == nil {
			g := newGradient(min(lim, restraintInitial), lim)
			e.grad = &g
		}
		drain := e.grad.mDrain
		e.grad.expire(now)
		if drain && !e.grad.mDrain {
			e.wake() // the limit doubled: requests held before the drain look again
		}
		lim = e.grad.limit()
	}
	if maxConc > 0 {
		return min(maxConc, lim)
	}
	return lim
}
