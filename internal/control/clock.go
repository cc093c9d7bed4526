package control

import (
	"time"

	"github.com/politehttp/polite/parse"
)

// The server's clock. A response's Date (whole seconds) received at ours
// t, for a request sent at s, says that the server's clock read Date to
// Date+1s at some instant in [s, t]: its offset from ours is in
// (Date-t, Date+1s-s). The key keeps the tightest such bounds of its
// responses, skewLo and skewHi, and estimates the offset as zero when it
// lies between them: the clocks agree unless the server's Dates prove
// otherwise. (The lower bound alone, which approaches the offset from
// below only when a response happens to be dated just after the server's
// second turned, runs a server whose resets are whole epoch seconds up to
// a second late: every other window of a one-second limit.) When they
// prove the clocks apart, the estimate is the lower bound, the server's
// clock at its earliest: an instant it states (a reset, a Retry-After
// date) is read late by at most the bounds' width, never early. The bound
// nearer zero was early, for a server behind, by up to that width (a
// second and a round trip): a reset stated on an answer with no Date was
// read up to a second early and the next request refused, a Retry-After
// date on one so too (see estimate). A sample outside the bounds means
// the server's clock moved: they start over from it. A refusal proves the
// estimate too high when a probe sent once a reset had passed finds it
// still ahead (see recognise).

// dated records the Date of an answer to the request l, Date minus its
// receive time being skew, received at now.
func (s *State) dated(l *Lease, skew time.Duration, now int64) {
	lo := int64(max(min(skew, maxSpan), -maxSpan))
	hi := int64(maxSpan)
	if l.start != 0 && l.start <= now {
		hi = min(lo+int64(time.Second)+(now-l.start), int64(maxSpan))
	}
	if s.flags&flagSkew == 0 || lo > s.skewHi || hi < s.skewLo {
		s.skewLo, s.skewHi = lo, hi
	} else {
		s.skewLo, s.skewHi = max(s.skewLo, lo), min(s.skewHi, hi)
	}
	s.flags |= flagSkew
	s.skew = estimate(s.skewLo, s.skewHi)
}

// estimate returns the key's estimate of the server's offset from our
// clock, given its bounds lo and hi: zero when it lies between them, else
// lo, the lower bound, which measures an instant the server states never
// before it (see the server's clock above). Behind, an honest server 90 s
// late whose Date is missing on every other answer, the bound nearer zero
// (hi) was its Dates' second after a burst sent as its windows opened:
// 0.96 s early. The first window's reset, stated with no Date, was read so
// and the next request refused; read a second later on that refusal's
// Date, the same reset was taken for the mark of a sliding-window counter
// of 10 per 1 s, whose pace sent an 11th request each window, refused,
// and its Retry-After date, measured from the estimate still up to 0.16 s
// high, was refused again: 9 to 17 of 100 refused, in some runs by
// scheduling. Ahead, lo was the bound nearer zero already.
func estimate(lo, hi int64) int64 {
	if lo <= 0 && 0 <= hi {
		return 0
	}
	return lo
}

// recognise reads a refusal of the request l, which observed q of the
// policy p, whose reset the key read as the instant last before it: a
// probe sent once a stated reset had passed, refused while the refusal
// states a reset still ahead.
//
// When the refusal's reset is the one before, the quota was not back at
// the instant the key computed for it: the key's estimate of the server's
// clock is too high, and is lowered below what the probe proved.
//
// When it is a later one, the end of the window the probe fell in, the
// quota was not back at its reset because the previous window still
// weighs on the count: the mark of a sliding-window counter
// (go-chi/httprate's, among others), which weighs the previous window by
// the share of it the last w still covers. It is paced smoothly from then
// on (see policy.pace); its window, when the server states none, is the
// span between the two resets (a stated reset is the end of an aligned
// window).
//
// A reset already past on a refusal (a server that rounds its resets
// down) is neither mark (see earlyResets).
func (s *State) recognise(p *policy, l *Lease, q *parse.Quota, last, now int64) {
	if p.unit != unitRequests || !l.probe || last == 0 || l.start < last || q.Remaining != 0 || q.Reset <= 0 || p.deadline <= now {
		return
	}
	if p.deadline-last < int64(resetGrain)/2 {
		if s.flags&flagSkew != 0 {
			s.skewHi = max(s.skewLo, min(s.skewHi, s.skew-(l.start-last)-1))
			s.skew = estimate(s.skewLo, s.skewHi)
		}
		return
	}
	if p.sliding || max(p.q, q.Limit) < 2 {
		return
	}
	p.markSliding(q, last)
}

// recogniseRetryAfter reads a refusal of the probe l whose quota q of
// the policy p is spent and resets already (its reset rounded down to the
// second, now past), while the refusal's Retry-After is two seconds or
// more. A fixed window whose reset is rounded down is back within a second
// of the reset it states, and a Retry-After that tells the truth says so;
// a sliding-window counter that states the end of its current window
// (go-chi/httprate, whose Retry-After is the window's length) is not,
// since the previous window still weighs. The policy is paced smoothly
// from then on, its window, when the server states none, that Retry-After.
func (s *State) recogniseRetryAfter(p *policy, l *Lease, q *parse.Quota, r *Refusal) {
	if p.sliding || p.unit != unitRequests || !l.probe || q.Remaining != 0 || q.Reset != 0 {
		return
	}
	if !r.Given || r.Reason != ReasonRetryAfter || r.Wait < 2*resetGrain || max(p.q, q.Limit) < 2 {
		return
	}
	if p.q == 0 || p.w == 0 {
		p.q, p.w = min(max(p.q, q.Limit), maxQuota), window(r.Wait)
	}
	p.sliding = p.w > 0
}

// recogniseAccepted reads an acceptance of the probe l, sent once the
// stated reset of p (last) had passed: a window that starts afresh at its
// reset has all of its quota back, less the requests in flight. A probe
// accepted with less than half of it left was counted against a previous
// window that still weighs: a sliding-window counter whose reset is
// rounded up (a whole second of a 1 s t, or of an epoch), recognised
// without a refusal, and paced smoothly from then on, q-1 per w. A
// sliding log, or a bucket, which frees its quota a request at a time,
// reads the same, and is paced no faster than its own rate.
func (s *State) recogniseAccepted(p *policy, l *Lease, q *parse.Quota, last, now int64) {
	if p.sliding || p.fixed || p.unit != unitRequests || !l.probe || last == 0 || l.start < last || q.Remaining < 0 || q.Reset <= 0 || p.deadline <= now {
		return
	}
	// Only a quota whose window the server states, and whose r counts
	// against that quota alone (draft-11 §4.1: a RateLimit item names its
	// policy), tells this: a legacy reset may be the time until a bucket
	// is full, and a legacy r may belong to another window.
	if q.Dialect != "ietf" || q.Window <= 0 || !p.paces() || p.q < 4 || q.Remaining+s.leases.n >= p.q/2 {
		return
	}
	p.sliding = true
}

// refute ends the mark of p as a sliding-window counter when refuteRow
// requests in a row granted after p's latest observation said r=0 (spent,
// which a mark passes over: see observe), and sent before the reset it
// stated, were refused, none so sent accepted between: the server counts
// as a window that is spent until its reset, such as a fixed window
// another client shares. Taking half of each window as it opens, that
// client made the probe at the reset accepted with less than half left,
// read as a counter's mark; taking all of one, it made the probe refused
// with the next window's reset, read so too. Paced at q-1 a window into
// such a quota, the key was refused about once a window, for good. A
// counter frees its quota as its previous window weighs less, and refuses
// such a request now and then too (shared with another client, or when
// its answers' latency varies), accepting the next: refuted at one
// refusal, it was paused to each stated reset, refused and marked again
// there (6 refused of 100 where 2 were); at two in a row, one used alone
// whose answers took up to a second more or less was refuted two windows
// after its first such refusal, and ran up to 35% slower. q is what the
// answer to l states of p, refused whether it is a refusal, spent whether
// the observation before said r=0, mark when it was read, and reset the
// reset it stated.
func (p *policy) refute(l *Lease, q *parse.Quota, refused, spent bool, mark uint64, reset int64) {
	if !p.sliding || !spent || l.seq <= mark || l.start >= reset {
		return
	}
	switch {
	case !refused:
		p.foreseen = 0
	case q.Remaining != 0:
		// Refused while the answer states room in p: another quota's
		// refusal (draft-11 §4.1: an item's r counts against its own
		// policy), which says nothing of p's algorithm. Counted, three
		// refusals of a spent quota of 5 a second refuted the mark of a
		// counter of 10 a minute stated beside it with 1 left.
	case p.foreseen+1 >= refuteRow:
		p.sliding, p.fixed, p.foreseen = false, true, 0
	default:
		p.foreseen++
	}
}

// refuteRow is how many refusals in a row refute a mark (see refute).
const refuteRow = 3

// markSliding marks p as a sliding-window counter, its window, when the
// server states none, the span between the reset before (last) and the
// one just read (a stated reset is the end of an aligned window).
func (p *policy) markSliding(q *parse.Quota, last int64) {
	if p.q == 0 || p.w == 0 {
		p.q, p.w = min(max(p.q, q.Limit), maxQuota), window(time.Duration(p.deadline-last))
	}
	p.sliding = p.w > 0
}

// writtenAgo returns how long, at most, the answer to l, received at now,
// was written before the instant its absolute resets were measured from:
// the server's clock at now as l's key estimated it, kept within the
// answer's Date and the second after (see parse.HeaderAt), or now when
// the answer has no Date. The Date is at or before the writing, so with
// one it is that estimate less the Date, under a second. Without one, the
// answer was written after l was granted, but most of that time may have
// gone before the writing (a model generating, a body the server read):
// the time since the grant, a second at most, as with a Date (a reply
// longer on its way back than that is not counted). A reset so measured
// is short by up to that much of the time from the writing, which the
// remaining does not count the refill of.
func writtenAgo(l *Lease, out *Outcome, now int64) int64 {
	if out.Dated {
		if e := l.skew - int64(out.Skew); l.skewOK && e > 0 && e < int64(time.Second) {
			return e
		}
		return 0 // measured from the Date itself
	}
	if l.start != 0 && l.start <= now {
		return min(now-l.start, int64(time.Second))
	}
	return 0
}
