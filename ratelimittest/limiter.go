package ratelimittest

import (
	"math"
	"math/bits"
	"time"
)

// A limiter is the counter of one policy for one partition. Its methods take
// the current instant explicitly, so that the Handler drives it with
// time.Now and Ideal with a simulated clock. The instants given to one
// limiter never decrease.
type limiter interface {
	// wait reports how long after now a request of the given cost would be
	// admitted if nothing else were admitted meanwhile. ok is false when the
	// passing of time alone never admits it: the cost exceeds the quota, or
	// (Concurrency) a request in flight has to finish first.
	wait(now time.Time, cost int64) (d time.Duration, ok bool)

	// take counts an admitted request of the given cost. It may overdraw the
	// quota; later requests then wait the debt out.
	take(now time.Time, cost int64)

	// release ends a request counted by take. Only Concurrency counts
	// requests in flight; the others ignore it.
	release(cost int64)

	// available reports the quota available at now, at least zero.
	available(now time.Time) int64

	// reset reports the effective window: how long until more than
	// available(now) units can have been admitted, assuming all of them are
	// spent at now. It is positive. ok is false for Concurrency, which has
	// no such time.
	reset(now time.Time) (d time.Duration, ok bool)

	// full reports how long until the whole quota is available again if
	// nothing more is admitted; zero if it is now.
	full(now time.Time) time.Duration

	// windowEnd reports how long until the end of the current aligned
	// window. ok is false for the algorithms without aligned windows.
	windowEnd(now time.Time) (d time.Duration, ok bool)
}

// newLimiter returns a fresh limiter for p created at start, whose aligned
// windows (and a leaky bucket's milliseconds) start phase before start, if
// phase is positive. Only phase modulo the window (modulo a millisecond)
// tells where their ends fall, so only that is kept: the origin is less
// than a window before start, and the time since it does not saturate
// for a phase of centuries.
func newLimiter(p *policy, start time.Time, phase time.Duration) limiter {
	phase = max(phase, 0)
	switch p.algorithm {
	case SlidingLog:
		return &slidingLog{quota: p.quota, window: p.window}
	case SlidingWindow, SlidingWindowRounded:
		return &slidingWindow{quota: p.quota, window: p.window, origin: start.Add(-phase % p.window), round: p.algorithm == SlidingWindowRounded}
	case TokenBucket:
		return &tokenBucket{quota: p.quota, window: p.window, last: start, tokens: p.quota}
	case LeakyBucket:
		return newLeakyBucket(p, start.Add(-phase%time.Millisecond))
	case Concurrency:
		return &concurrency{quota: p.quota}
	case FixedWindowFromFirst:
		return &fixedWindow{quota: p.quota, window: p.window, fromFirst: true}
	}
	return &fixedWindow{quota: p.quota, window: p.window, origin: start.Add(-phase % p.window)}
}

// fixedWindow counts admissions per aligned window or, fromFirst, per
// window started by the first admission after the last one ended.
type fixedWindow struct {
	quota  int64
	window time.Duration
	origin time.Time
	index  int64 // of the current aligned window, counted from origin
	used   int64 // admitted in the current window

	fromFirst bool
	end       time.Time // fromFirst: of the current window; zero when none is open
}

func (l *fixedWindow) advance(now time.Time) {
	if l.fromFirst {
		if !l.end.IsZero() && !now.Before(l.end) {
			l.end, l.used = time.Time{}, 0
		}
		return
	}
	if i := windowIndex(l.origin, now, l.window); i != l.index {
		l.index, l.used = i, 0
	}
}

// left reports the time from now to the end of the current window; with
// no window open (fromFirst), the length of the one a request would open.
func (l *fixedWindow) left(now time.Time) time.Duration {
	if !l.fromFirst {
		return windowStart(l.origin, l.index+1, l.window).Sub(now)
	}
	if l.end.IsZero() {
		return l.window
	}
	return l.end.Sub(now)
}

func (l *fixedWindow) wait(now time.Time, cost int64) (time.Duration, bool) {
	if cost > l.quota {
		return 0, false
	}
	l.advance(now)
	if cost <= l.quota-l.used { // used+cost wrapped past MaxInt64 for huge costs
		return 0, true
	}
	return l.left(now), true
}

func (l *fixedWindow) take(now time.Time, cost int64) {
	l.advance(now)
	if l.fromFirst && l.end.IsZero() {
		l.end = now.Add(l.window)
	}
	l.used += cost
}

func (l *fixedWindow) release(int64) {}

func (l *fixedWindow) available(now time.Time) int64 {
	l.advance(now)
	return max(l.quota-l.used, 0)
}

func (l *fixedWindow) reset(now time.Time) (time.Duration, bool) {
	l.advance(now)
	return l.left(now), true
}

func (l *fixedWindow) full(now time.Time) time.Duration {
	l.advance(now)
	if l.used == 0 {
		return 0
	}
	return l.left(now)
}

func (l *fixedWindow) windowEnd(now time.Time) (time.Duration, bool) {
	l.advance(now)
	return l.left(now), true
}

// slidingLog keeps every admission of the last window.
type slidingLog struct {
	quota  int64
	window time.Duration
	log    []admission // oldest first; all younger than window
	used   int64       // sum of the costs in log
}

type admission struct {
	at   time.Time
	cost int64
}

// prune forgets the admissions that are a window old. Reslicing keeps the
// backing array, but append moves only the live entries when it grows, so
// memory stays proportional to the admissions of one window.
func (l *slidingLog) prune(now time.Time) {
	n := 0
	for n < len(l.log) && !l.log[n].at.Add(l.window).After(now) {
		l.used -= l.log[n].cost
		n++
	}
	l.log = l.log[n:]
	if len(l.log) == 0 {
		l.log = nil
	}
}

// leave reports how long from now until admissions costing at least need
// in all have left the log. If the log holds less, it is the time until an
// admission made now leaves it: a window.
func (l *slidingLog) leave(now time.Time, need int64) time.Duration {
	for _, a := range l.log {
		need -= a.cost
		if need <= 0 {
			return a.at.Add(l.window).Sub(now)
		}
	}
	return l.window
}

func (l *slidingLog) wait(now time.Time, cost int64) (time.Duration, bool) {
	if cost > l.quota {
		return 0, false
	}
	l.prune(now)
	if need := l.used + cost - l.quota; need > 0 {
		return l.leave(now, need), true
	}
	return 0, true
}

func (l *slidingLog) take(now time.Time, cost int64) {
	l.prune(now)
	if cost > 0 {
		l.log = append(l.log, admission{now, cost})
		l.used += cost
	}
}

func (l *slidingLog) release(int64) {}

func (l *slidingLog) available(now time.Time) int64 {
	l.prune(now)
	return max(l.quota-l.used, 0)
}

func (l *slidingLog) reset(now time.Time) (time.Duration, bool) {
	l.prune(now)
	// After spending what is available, used is max(used, quota); one more
	// unit needs that excess plus one to leave.
	return l.leave(now, max(l.used-l.quota, 0)+1), true
}

func (l *slidingLog) full(now time.Time) time.Duration {
	l.prune(now)
	if len(l.log) == 0 {
		return 0
	}
	return l.log[len(l.log)-1].at.Add(l.window).Sub(now)
}

func (l *slidingLog) windowEnd(time.Time) (time.Duration, bool) { return 0, false }

// slidingWindow is the sliding-window counter: it admits a request of cost c
// at offset e into the current aligned window when
//
//	ceil(prev*(window-e)/window) + cur + c <= quota
//
// where prev and cur are the admissions of the previous and current windows;
// with round, the weighted prev is rounded to the nearest integer, halves
// up, instead of up.
type slidingWindow struct {
	quota     int64
	window    time.Duration
	origin    time.Time
	round     bool
	index     int64 // of the current window, counted from origin
	prev, cur int64
}

// weight reports how much prev counts with left of the current window to go.
func (l *slidingWindow) weight(prev, left int64) int64 {
	if l.round {
		return mulDivRound(prev, left, int64(l.window))
	}
	return mulDivCeil(prev, left, int64(l.window))
}

func (l *slidingWindow) advance(now time.Time) {
	switch i := windowIndex(l.origin, now, l.window); i {
	case l.index:
	case l.index + 1:
		l.index, l.prev, l.cur = i, l.cur, 0
	default:
		l.index, l.prev, l.cur = i, 0, 0
	}
}

func (l *slidingWindow) start() time.Time {
	return windowStart(l.origin, l.index, l.window)
}

// earliest reports how long from now until a request of the given cost would
// be admitted, had the windows the counts prev and cur.
func (l *slidingWindow) earliest(now time.Time, prev, cur, cost int64) (time.Duration, bool) {
	if cost > l.quota {
		return 0, false
	}
	w := int64(l.window)
	start := l.start()
	e := int64(now.Sub(start))
	// Two window shifts empty both counts, and then cost <= quota is admitted.
	for {
		if a := l.quota - cur - cost; a >= 0 {
			m := e
			switch {
			case prev > 0 && l.round:
				// round(prev*(w-m)/w) <= a  ⇔  2*prev*(w-m) < (2a+1)*w
				//   ⇔  m >= w - ceil((2a+1)*w/(2*prev)) + 1
				m = max(m, w-mulDivCeil(2*a+1, w, 2*prev)+1)
			case prev > 0:
				// ceil(prev*(w-m)/w) <= a  ⇔  m >= w - floor(a*w/prev)
				m = max(m, w-mulDiv(a, w, prev))
			}
			if m < w {
				return start.Add(time.Duration(m)).Sub(now), true
			}
		}
		prev, cur = cur, 0
		start = start.Add(l.window)
		e = 0
	}
}

func (l *slidingWindow) wait(now time.Time, cost int64) (time.Duration, bool) {
	l.advance(now)
	return l.earliest(now, l.prev, l.cur, cost)
}

func (l *slidingWindow) take(now time.Time, cost int64) {
	l.advance(now)
	l.cur += cost
}

func (l *slidingWindow) release(int64) {}

func (l *slidingWindow) available(now time.Time) int64 {
	l.advance(now)
	e := int64(now.Sub(l.start()))
	return max(l.quota-l.cur-l.weight(l.prev, int64(l.window)-e), 0)
}

func (l *slidingWindow) reset(now time.Time) (time.Duration, bool) {
	if l.quota == 0 {
		return l.window, true
	}
	r := l.available(now)
	return l.earliest(now, l.prev, l.cur+r, 1)
}

// full is when a request of the whole quota would be admitted: the
// weighted prev and cur both zero. Rounded, the weight of the previous
// window is zero before its end, once it is under a half.
func (l *slidingWindow) full(now time.Time) time.Duration {
	l.advance(now)
	if l.cur == 0 && l.prev == 0 || l.quota == 0 {
		return 0
	}
	d, _ := l.earliest(now, l.prev, l.cur, l.quota)
	return d
}

func (l *slidingWindow) windowEnd(now time.Time) (time.Duration, bool) {
	l.advance(now)
	return l.start().Add(l.window).Sub(now), true
}

// tokenBucket holds up to quota tokens and gains quota tokens per window.
// The fraction of the next token is kept exactly, in units of 1/window
// tokens, so that no rounding accumulates.
type tokenBucket struct {
	quota  int64
	window time.Duration
	last   time.Time // instant up to which tokens are accounted
	tokens int64     // whole tokens; negative when overdrawn
	frac   int64     // fraction of the next token, in [0, window)
}

func (l *tokenBucket) advance(now time.Time) {
	d := now.Sub(l.last)
	if d <= 0 {
		return
	}
	l.last = now
	if l.tokens >= l.quota {
		l.tokens, l.frac = l.quota, 0
		return
	}
	// Every nanosecond adds quota units of 1/window tokens.
	hi, lo := bits.Mul64(uint64(d), uint64(l.quota))
	lo, carry := bits.Add64(lo, uint64(l.frac), 0)
	hi += carry
	if hi >= uint64(l.window) {
		l.tokens, l.frac = l.quota, 0
		return
	}
	gained, frac := bits.Div64(hi, lo, uint64(l.window))
	if gained >= uint64(l.quota-l.tokens) {
		l.tokens, l.frac = l.quota, 0
		return
	}
	l.tokens += int64(gained)
	l.frac = int64(frac)
}

// until reports how long until the bucket holds n tokens, had it tokens
// whole tokens (fewer than n) and the current fraction.
func (l *tokenBucket) until(tokens, n int64) time.Duration {
	// ceil(((n-tokens)*window - frac) / quota)
	hi, lo := bits.Mul64(uint64(n-tokens), uint64(l.window))
	lo, borrow := bits.Sub64(lo, uint64(l.frac), 0)
	hi -= borrow
	if hi >= uint64(l.quota) {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, uint64(l.quota))
	if r != 0 {
		q++
	}
	return time.Duration(min(q, math.MaxInt64))
}

func (l *tokenBucket) wait(now time.Time, cost int64) (time.Duration, bool) {
	if cost > l.quota {
		return 0, false
	}
	l.advance(now)
	if l.tokens >= cost {
		return 0, true
	}
	return l.until(l.tokens, cost), true
}

func (l *tokenBucket) take(now time.Time, cost int64) {
	l.advance(now)
	l.tokens -= cost
}

func (l *tokenBucket) release(int64) {}

func (l *tokenBucket) available(now time.Time) int64 {
	l.advance(now)
	return max(l.tokens, 0)
}

func (l *tokenBucket) reset(now time.Time) (time.Duration, bool) {
	if l.quota == 0 {
		return l.window, true
	}
	l.advance(now)
	return l.until(min(l.tokens, 0), 1), true
}

func (l *tokenBucket) full(now time.Time) time.Duration {
	l.advance(now)
	if l.tokens >= l.quota {
		return 0
	}
	return l.until(l.tokens, l.quota)
}

func (l *tokenBucket) windowEnd(time.Time) (time.Duration, bool) { return 0, false }

// leakyBucket is nginx's limit_req with nodelay, after
// ngx_http_limit_req_lookup: it counts in thousandths of a request and in
// whole milliseconds since origin. A request of cost c at millisecond m
// would leave the excess
//
//	max(0, excess - rate*(m-last)/per + 1000) + 1000*(c-1)
//
// (the leak rounded down, as nginx does) and is refused if that exceeds
// burst. Admitting it stores that excess and m as last; a refusal changes
// nothing. A fresh bucket leaves 1000*(c-1): nginx's first request for a
// key leaves 0. nginx only ever charges one request; cost c charges the
// first unit as nginx does and the others in full.
type leakyBucket struct {
	rate   int64 // with per, the leak: rate/per thousandths of a request a millisecond; 0 refuses everything
	per    int64 // positive, 1000 but for the slowest rates
	burst  int64 // thousandths of a request
	window time.Duration
	origin time.Time
	fresh  bool  // nothing admitted yet
	last   int64 // millisecond of the last admission, since origin
	excess int64 // thousandths of a request
}

func newLeakyBucket(p *policy, origin time.Time) *leakyBucket {
	l := &leakyBucket{
		per:    1000,
		burst:  p.burst * 1000, // at most MaxBurst*1000: no overflow
		window: p.window,
		origin: origin,
		fresh:  true,
	}
	if p.quota > 0 {
		// Quota per Window, in thousandths of a request per second,
		// rounded down as nginx's rate=Nr/m is.
		l.rate, l.per = mulDiv(p.quota, 1000*int64(time.Second), int64(p.window)), 1000
		if l.rate == 0 {
			// Under one request in 1000 s, slower than nginx can be
			// told (1r/m), the rate rounds down to none: the bucket
			// would never leak. It is kept exact instead: Quota*1000
			// thousandths per Window nanoseconds is Quota*1e9/Window
			// a millisecond. Here Quota*1e12 < Window, so Quota*1e9
			// cannot overflow, and it is positive.
			l.rate, l.per = p.quota*1000*int64(time.Millisecond), int64(p.window)
		}
	}
	return l
}

// ms reports the millisecond of now since origin.
func (l *leakyBucket) ms(now time.Time) int64 {
	return max(int64(now.Sub(l.origin)/time.Millisecond), 0)
}

// first reports the excess a request of cost 1 would leave at millisecond m.
func (l *leakyBucket) first(m int64) int64 {
	if l.fresh {
		return 0
	}
	leak := mulDiv(l.rate, m-l.last, l.per)
	return max(saturatingAdd(l.excess-leak, 1000), 0)
}

// leaked reports how many milliseconds the bucket takes to leak need
// thousandths of a request: rate*d/per >= need  ⇔  d >= ceil(need*per/rate).
func (l *leakyBucket) leaked(need int64) int64 {
	return mulDivCeil(need, l.per, l.rate)
}

// tooBig reports whether a request of the given cost is never admitted:
// it costs more than Burst+1, or anything at all when nothing leaks.
func (l *leakyBucket) tooBig(cost int64) bool {
	return cost > 0 && (l.rate == 0 || cost-1 > l.burst/1000)
}

func (l *leakyBucket) wait(now time.Time, cost int64) (time.Duration, bool) {
	if l.tooBig(cost) {
		return 0, false
	}
	// Past tooBig, 1000*cost is at most burst+1000, which fits (see
	// MaxBurst); an overdrawn excess may not leave room for it.
	if saturatingAdd(l.first(l.ms(now)), 1000*(cost-1)) <= l.burst {
		return 0, true
	}
	if l.rate == 0 {
		// Overdrawn by a response longer than its cost at admission,
		// and nothing leaks: even a request of no cost waits forever.
		return 0, false
	}
	need := saturatingAdd(l.excess-l.burst, 1000*cost)
	at := saturatingAdd(l.last, l.leaked(need))
	return l.origin.Add(time.Duration(saturatingMul(at, int64(time.Millisecond)))).Sub(now), true
}

func (l *leakyBucket) take(now time.Time, cost int64) {
	if cost <= 0 {
		return // it costs nothing: the bucket is as it was
	}
	m := l.ms(now)
	l.excess = saturatingAdd(l.first(m), saturatingMul(1000, max(cost-1, 0)))
	l.last, l.fresh = m, false
}

func (l *leakyBucket) release(int64) {}

func (l *leakyBucket) available(now time.Time) int64 {
	if l.rate == 0 {
		return 0
	}
	e := l.first(l.ms(now))
	if e > l.burst {
		return 0
	}
	return (l.burst-e)/1000 + 1
}

func (l *leakyBucket) reset(now time.Time) (time.Duration, bool) {
	if l.rate == 0 {
		return l.window, true
	}
	spent := *l
	if a := l.available(now); a > 0 {
		spent.take(now, a)
	}
	d, _ := spent.wait(now, 1)
	return d, true
}

func (l *leakyBucket) full(now time.Time) time.Duration {
	if l.rate == 0 || l.first(l.ms(now)) == 0 {
		return 0
	}
	// A leak of excess + 1000 leaves a later request 0.
	at := saturatingAdd(l.last, l.leaked(saturatingAdd(l.excess, 1000)))
	return l.origin.Add(time.Duration(saturatingMul(at, int64(time.Millisecond)))).Sub(now)
}

func (l *leakyBucket) windowEnd(time.Time) (time.Duration, bool) { return 0, false }

// concurrency counts requests in flight.
type concurrency struct {
	quota    int64
	inflight int64
}

func (l *concurrency) wait(_ time.Time, cost int64) (time.Duration, bool) {
	return 0, l.inflight+cost <= l.quota
}

func (l *concurrency) take(_ time.Time, cost int64) { l.inflight += cost }

func (l *concurrency) release(cost int64) { l.inflight -= cost }

func (l *concurrency) available(time.Time) int64 { return max(l.quota-l.inflight, 0) }

func (l *concurrency) reset(time.Time) (time.Duration, bool) { return 0, false }

func (l *concurrency) full(time.Time) time.Duration { return 0 }

func (l *concurrency) windowEnd(time.Time) (time.Duration, bool) { return 0, false }

// windowIndex reports which aligned window of the given length, counted
// from origin, holds now.
func windowIndex(origin, now time.Time, window time.Duration) int64 {
	d := now.Sub(origin)
	if d < 0 {
		return 0
	}
	return int64(d / window)
}

// windowStart reports the start of aligned window i.
func windowStart(origin time.Time, i int64, window time.Duration) time.Time {
	return origin.Add(time.Duration(mulDiv(i, int64(window), 1)))
}

// mulDiv returns floor(a*b/c) for a, b >= 0 and c > 0, saturating at
// math.MaxInt64.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(min(q, math.MaxInt64))
}

// mulDivCeil returns ceil(a*b/c) for a, b >= 0 and c > 0, saturating at
// math.MaxInt64.
func mulDivCeil(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, uint64(c))
	if r != 0 {
		q++
	}
	return int64(min(q, math.MaxInt64))
}

// mulDivRound returns a*b/c rounded to the nearest integer, halves up, for
// a, b >= 0 and c > 0, saturating at math.MaxInt64.
func mulDivRound(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, uint64(c))
	if r >= uint64(c)-r {
		q++
	}
	return int64(min(q, math.MaxInt64))
}
