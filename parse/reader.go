package parse

import (
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// A Reader reads the rate-limit fields of the responses of one server,
// as [HeaderAt] does, and remembers what a server repeats from one
// response to the next, so as not to read it again: the last
// RateLimit-Policy (and Beta-RateLimit-Policy) value it read, with its
// policies, and the last Date, with its instant. A server states its
// policies in every response and they seldom change; its Date changes
// once a second.
//
// A Reader holds at most one value of each field, of at most 4096 bytes;
// a longer value, or one sent as several field lines, is read every time. The zero value is ready
// to use. A Reader is safe for concurrent use by multiple goroutines; it
// must not be copied after first use. Keep one per server (per key of a
// rate-limit budget): a Reader shared by servers that state different
// policies reads them every time.
type Reader struct {
	policy [2]atomic.Pointer[policyMemo] // RateLimit-Policy, Beta-RateLimit-Policy
	served atomic.Pointer[dateMemo]
}

// maxMemo is the length of the longest field value a Reader remembers.
const maxMemo = 4096

// A policyMemo is a RateLimit-Policy value and its policies, which are
// never modified.
type policyMemo struct {
	value string
	ps    []Policy
}

// A dateMemo is a Date in the form of an IMF-fixdate and its instant,
// zero when it is invalid, and when it was first read (the caller's now).
type dateMemo struct {
	value [4]uint64 // as fixdateWords returns it
	t     time.Time
	seen  time.Time
}

// staleDate is how long after a Date value was first read the Reader
// takes the same value for one that is no clock (see [Reader.Read]), in
// whole seconds. A Date names the second the server dated its response
// in: the responses it dates in one second arrive within a second and
// their spread of latency.
const staleDate = 2

// fixdateWords returns the imfFixdateLen bytes of s as four words, the
// last overlapping the third, so that two values are equal when their
// words are: four comparisons instead of a call to compare bytes.
func fixdateWords(s string) [4]uint64 {
	return [4]uint64{load8(s, 0), load8(s, 8), load8(s, 16), load8(s, imfFixdateLen-8)}
}

// is reports whether the Date value s is the one remembered.
func (m *dateMemo) is(s string) bool {
	return len(s) == imfFixdateLen && m.value[0] == load8(s, 0) && m.value[1] == load8(s, 8) &&
		m.value[2] == load8(s, 16) && m.value[3] == load8(s, imfFixdateLen-8)
}

// imfFixdateLen is the length of an IMF-fixdate (RFC 9110 §5.6.7).
const imfFixdateLen = len("Sun, 06 Nov 1994 08:49:37 GMT")

// Read returns the quotas h describes, as [HeaderAt] does, and the
// instant of h's Date field; the zero time when it is absent or invalid.
//
// Absolute resets are measured from estimate, the instant the caller
// believes the server generated the response, by the server's clock
// (see [HeaderAt]). If estimate is before the response's Date, or a
// second or more after it, it cannot be right, since Date only drops the
// fraction of that instant: Read measures from Date instead (an estimate
// thrown far off by one response's bogus Date is so set right by the next
// response's good one). If estimate is the zero
// time, Read measures from Date, or from now when Date is absent or
// invalid, as [Header] does, but for a Date far behind now (see the
// package documentation). Given an estimate, a Date whose value the
// Reader first read 2 seconds or more before now is taken for absent, and
// resets are measured from the estimate: a server's clock moves on, and a
// Date frozen at one value (a broken server's, a proxy's that repeats one)
// measured each reset from an instant further in the past, waits growing
// by the time since it froze. (A server that dates a response as its
// request arrived repeats a Date after a slow answer too; the estimate
// serves it as well.) With no estimate, the Date is all there is. The
// Date returned lets the caller refine its estimate for the next response
// without parsing the field again; Read returns it whether or not h has
// rate-limit fields.
//
// The quotas of two calls may share the backing array of their Partition,
// which must not be modified.
func (r *Reader) Read(h http.Header, now, estimate time.Time) (quotas []Quota, date time.Time) {
	return read(nil, h, now, estimate, r, false, true)
}

// ReadFresh is like Read, for a response that may have come from a cache:
// when it did (see [FromCache]), its rate-limit fields may not be current
// (draft-11 §7.3) and ReadFresh returns no quotas. It returns the Date
// with quotas only: when it returns none, date is the zero time, and a
// Date alone is not parsed. It finds the Age field in the one pass Read
// makes over the names of h, instead of looking it up again.
func (r *Reader) ReadFresh(h http.Header, now, estimate time.Time) (quotas []Quota, date time.Time) {
	return read(nil, h, now, estimate, r, true, true)
}

// AppendFresh is like ReadFresh, but appends the quotas to dst and returns
// the extended slice, as strconv.AppendInt does. With room in dst for the
// quotas, it allocates nothing to hold them for the sets of fields servers
// send most (the IETF pair, the X-RateLimit-* fields, OpenAI's): a caller
// that reads every response into one buffer, and is done with its quotas
// before the next read, saves the allocation of each result. What the
// Reader remembers still allocates as for Read: a Date other than the last
// one, a RateLimit-Policy other than the last, and a partition key (pk),
// which is decoded for each response.
func (r *Reader) AppendFresh(dst []Quota, h http.Header, now, estimate time.Time) (quotas []Quota, date time.Time) {
	return read(dst, h, now, estimate, r, true, true)
}

// origin returns the instant absolute resets are measured from, as Read
// documents, given the response's Date served (zero when invalid).
func origin(now, estimate, served time.Time) time.Time {
	switch {
	case estimate.IsZero(), !served.IsZero() && (estimate.Before(served) || secondAfter(estimate, served)):
		estimate = served
	}
	if estimate.IsZero() {
		return now
	}
	return estimate
}

// secondAfter reports whether a is a second or more after b, as
// a.Sub(b) >= time.Second does, for a b without a monotonic clock reading
// (a Date never has one): see secondsAfter.
func secondAfter(a, b time.Time) bool { return secondsAfter(a, b, 1) }

// secondsAfter reports whether a is n seconds or more after b (n > 0), as
// a.Sub(b) >= time.Duration(n)*time.Second does, for times of which one at least has no
// monotonic clock reading, comparing whole seconds rather than running
// Sub's saturating arithmetic, which checks its result with an Add and an
// Equal. Times so far apart that the seconds might wrap, which no
// response's Date is, go through Sub.
func secondsAfter(a, b time.Time, n int64) bool {
	const far = 1 << 40 // seconds; beyond Sub's saturation, within int64
	switch d := a.Unix() - b.Unix(); {
	case d <= -far || d >= far:
		return a.Sub(b) >= time.Duration(n)*time.Second
	case d == n:
		return a.Nanosecond() >= b.Nanosecond()
	default:
		return d > n
	}
}

// Date returns the instant of a Date field whose lines are lines, as
// [Reader.Read] judges it, for a response received at now, estimate being
// the caller's estimate of the server's clock then, as Read takes it: the
// zero time when it is absent or invalid, or when estimate is not the zero
// time and the value was first read 2 seconds or more before now (a Date
// frozen at one value, which Read takes for absent). It remembers the
// value as Read does, and parses it only when it is another. A caller
// that measures an instant a response states (a Retry-After date) from
// its Date thus measures it as Read measures resets.
func (r *Reader) Date(lines []string, now, estimate time.Time) time.Time {
	return r.date(lines, now, !estimate.IsZero())
}

// date returns the instant of the Date field with lines vals; the zero
// time when it is absent or invalid, or, when stale is set, when its value
// was first read staleDate seconds or more before now (see Read). A Date
// repeated over several lines counts by its first, as in [parser.origin],
// and so does one repeated on one line (see dateLine).
func (r *Reader) date(vals []string, now time.Time, stale bool) time.Time {
	if len(vals) == 0 {
		return time.Time{}
	}
	s := dateLine(vals[0])
	m := r.served.Load()
	if m != nil && m.is(s) {
		if stale && secondsAfter(now, m.seen, staleDate) {
			return time.Time{} // frozen: see Read
		}
		return m.t
	}
	t, ok := HTTPDate(s, now)
	if !ok {
		t = time.Time{}
	}
	// Only the IMF-fixdate form, which servers send, is remembered: the
	// obsolete RFC 850 form names a century that depends on now.
	if len(s) == imfFixdateLen && s[3] == ',' {
		m = &dateMemo{value: fixdateWords(s), t: t, seen: now}
		r.served.Store(m)
	}
	return t
}

// policies returns the policies of the RateLimit-Policy value v (of
// Beta-RateLimit-Policy when s is its slot), which the caller must not
// modify.
func (r *Reader) policies(s slot, v string) []Policy {
	memo := &r.policy[0]
	if s == sBetaRateLimitPolicy {
		memo = &r.policy[1]
	}
	if m := memo.Load(); m != nil && m.value == v {
		return m.ps
	}
	if len(v) > maxMemo {
		return policiesOf(nil, []string{v})
	}
	// Read a copy: the policies' names point into it, and v may be part
	// of a longer string.
	m := &policyMemo{value: strings.Clone(v)}
	m.ps = policiesOf(nil, []string{m.value})
	memo.Store(m)
	return m.ps
}
