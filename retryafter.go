package polite

import (
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/politehttp/polite/internal/serverclock"
	"github.com/politehttp/polite/internal/zone"
	"github.com/politehttp/polite/parse"
)

// RetryAfter reports the delay a response asks for before the next request.
//
// A valid retry-after-ms (milliseconds, as Azure OpenAI and the Stainless
// SDKs use it) wins over Retry-After. Retry-After (RFC 9110 §10.2.3) is
// either delay-seconds, where a decimal such as "2.0" (sent by Shopify) is
// accepted too, or an HTTP-date in any of the three forms of RFC 9110
// §5.6.7, measured from the response's Date header when that is valid
// (which cancels clock skew between client and server) and from now when
// it is not; a date in the past asks for no delay. A Date more than 10
// minutes off now is taken for one that lies (in the wrong zone, or
// frozen) rather than a server's clock that far off: behind, a date is
// measured from now unless it is more than a minute past by now (a clock
// truly that late set it); ahead, a date more than 10 minutes past by the
// Date, and at most 10 minutes ahead by now, is measured from now. A date
// ending in "UTC" instead of "GMT", as Go code formatting with
// time.RFC1123 writes it, is read too, and an IMF-fixdate ending in a
// numeric zone ("+0000",
// "-0000", "+0100") as RFC 5322 and Go's time.RFC1123Z write it, its
// offset applied; an IMF-fixdate's day of the month may have one digit,
// as RFC 1123 allows and Java's RFC_1123_DATE_TIME writes it. A number too large for
// an int64 saturates at the longest Duration: the server asked for a wait
// beyond any cap.
//
// ok is false when neither field is present and valid: a negative
// number, an exponent, several field lines or anything else. The status
// code plays no part, and vendor hints such as X-Retry-In or
// X-RateLimit-Reset are not read; see [parse.Header] for those.
//
// https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	return retryAfter(h, now, time.Time{}, time.Time{}, nil)
}

// retryAfter is RetryAfter, measuring an HTTP-date from estimate, the
// server's clock as the caller estimates it, when h has no valid Date,
// and from now when there is no estimate either: an estimate more than
// offDate off now, thrown off by a lying Date, is doubted as such a Date
// is (see offWait), and cannot lock the origin through a date that now
// has within reach. A wait read too short costs a refusal, which the
// refusal floor and its doubling space out. sent, when not zero, is when
// the request that drew h was sent (see offWait). rd, when not nil, is the
// Reader of the key h answered for, which judges h's Date (see
// serverBase).
func retryAfter(h http.Header, now, estimate, sent time.Time, rd *parse.Reader) (time.Duration, bool) {
	d, _, ok := retryAfterOf(h, now, estimate, sent, rd)
	return d, ok
}

// retryAfterOf is retryAfter, and reports whether the wait is a delay
// (delay-seconds, retry-after-ms) rather than an HTTP-date: a delay counts
// from when the response was made, which a cache's Age puts in the past.
func retryAfterOf(h http.Header, now, estimate, sent time.Time, rd *parse.Reader) (wait time.Duration, delay, ok bool) {
	if v, ok := raSingle(raValues(h, "Retry-After-Ms")); ok {
		if w, n, st := raDecimal(v); st != raInvalid {
			if st == raOverflow || w > (math.MaxInt64-n/1e3)/int64(time.Millisecond) {
				return math.MaxInt64, true, true
			}
			return time.Duration(w)*time.Millisecond + time.Duration(n/1e3), true, true
		}
	}
	v, ok := raSingle(raValues(h, "Retry-After"))
	if !ok {
		return 0, false, false
	}
	if w, n, st := raDecimal(v); st != raInvalid {
		if st == raOverflow || w > (math.MaxInt64-n)/int64(time.Second) {
			return math.MaxInt64, true, true
		}
		return time.Duration(w)*time.Second + time.Duration(n), true, true
	}
	t, ok := parse.HTTPDate(v, now)
	if !ok {
		t, ok = zonedDate(v, now)
	}
	if !ok {
		return 0, false, false
	}
	base := serverBase(h, now, estimate, rd)
	return max(offWait(t.Sub(base), t.Sub(now), base, now, sent), 0), false, true
}

// serverBase returns the instant an answer with header h, received at
// now, was made, on the server's clock: its Date when valid, else
// estimate, the caller's estimate of that clock, else now. Given rd, the
// Reader of the answer's key (see Transport.reader), the Date is judged as
// rd judges it: given an estimate, a Date frozen at one value is none (see
// parse.Reader.Read), as it is for the answer's resets.
func serverBase(h http.Header, now, estimate time.Time, rd *parse.Reader) time.Time {
	if rd != nil {
		if b := rd.Date(raValues(h, "Date"), now, estimate); !b.IsZero() {
			return b
		}
	} else if d, ok := raDate(h); ok {
		if b, ok := parse.HTTPDate(d, now); ok {
			return b
		}
	}
	if !estimate.IsZero() {
		return estimate
	}
	return now
}

// offWait returns the wait until an instant: d measured from base, the
// server's clock (the response's Date, or the caller's estimate of it),
// or dn measured from now when base is more than offDate off now, as
// package parse reads an absolute reset. Behind, dn, unless the instant
// is more than justPast past by now, which a clock truly that late
// reckoned; given sent, when the request that drew the answer was sent,
// unless it is more than serverclock.Slack before sent (serverclock.Wait), as
// sentBehind reads a reset: a server whose clock is right asks for no
// retry before it refused. Ahead, dn when the instant is more than
// offDate past by base, which no server gives as the end of a wait it
// asks for, and at most offDate ahead by now.
func offWait(d, dn time.Duration, base, now, sent time.Time) time.Duration {
	switch off := now.Sub(base); {
	case off > offDate:
		if !sent.IsZero() {
			return serverclock.Wait(d, base, sent, now)
		}
		if dn >= -justPast {
			return dn
		}
	case -off > offDate && -d > offDate && 0 < dn && dn <= offDate:
		return dn
	}
	return d
}

// offDate is how far off the caller's clock a response's Date may be and
// still be read as the server's clock, off, rather than a Date that lies
// (in the wrong zone, or frozen): package parse draws the same line for
// the absolute resets it measures from a Date. See RetryAfter.
const offDate = serverclock.Off

// justPast is how far past by now a date measured from now under a Date
// more than offDate behind may be and still be due, when the caller does
// not say when the request was sent (see offWait): a second of rounding
// down, and the time the response took (package parse draws the same
// line).
const justPast = time.Minute

// raValues returns the field lines of h named canon, which must be in
// canonical form; a name differing only in case, as a hand-built header
// map may hold, is found too. The lines of several spellings, the
// canonical one among them, are joined in name order, as package parse
// joins every field's, so that the answer does not hang on the map's
// order.
func raValues(h http.Header, canon string) []string {
	var (
		first string
		n     int // spellings found
	)
	for k := range h {
		if len(k) == len(canon) && strings.EqualFold(k, canon) {
			if n++; n == 1 {
				first = k
			}
		}
	}
	switch n {
	case 0:
		return nil
	case 1:
		return h[first]
	}
	names := make([]string, 0, n)
	for k := range h {
		if len(k) == len(canon) && strings.EqualFold(k, canon) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var lines []string
	for _, k := range names {
		lines = append(lines, h[k]...)
	}
	return lines
}

// raDate returns the Date of h, as package parse reads it: by its first
// line, and its first date when that line holds the same one twice,
// comma-joined ("D, D"), so that Retry-After and the resets of the same
// response are read by the same clock.
func raDate(h http.Header) (string, bool) {
	vals := raValues(h, "Date")
	if len(vals) == 0 {
		return "", false
	}
	s := strings.Trim(vals[0], " \t")
	if n := (len(s) - 2) / 2; len(s) > 2 && len(s)%2 == 0 && s[n:n+2] == ", " && s[:n] == s[n+2:] {
		s = s[:n]
	}
	return s, s != ""
}

// raSingle returns the only field line of vals, trimmed of optional white
// space (SP and HTAB). Retry-After is a singleton field: several lines
// give no hint.
func raSingle(vals []string) (string, bool) {
	if len(vals) != 1 {
		return "", false
	}
	s := strings.Trim(vals[0], " \t")
	return s, s != ""
}

// Status of raDecimal.
const (
	raInvalid  = iota // not ^\d+(\.\d+)?$
	raOK              // valid; the whole part fits int64
	raOverflow        // valid, but the whole part does not fit int64
)

// raDecimal parses s by the grammar ^\d+(\.\d+)?$ into its whole part and
// its fraction in units of 1e-9; digits past the ninth are dropped. Signs,
// exponents and the other forms strconv.ParseFloat accepts are invalid.
func raDecimal(s string) (whole, nano int64, status int) {
	status = raOK
	i := 0
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		d := int64(s[i] - '0')
		if whole > (math.MaxInt64-d)/10 {
			status = raOverflow
		} else if status == raOK {
			whole = whole*10 + d
		}
	}
	if i == 0 {
		return 0, 0, raInvalid
	}
	if i < len(s) {
		if s[i] != '.' || i+1 == len(s) {
			return 0, 0, raInvalid
		}
		scale := int64(1e8)
		for _, c := range []byte(s[i+1:]) {
			if c < '0' || c > '9' {
				return 0, 0, raInvalid
			}
			nano += int64(c-'0') * scale
			scale /= 10
		}
	}
	return whole, nano, status
}

// zonedDate parses an HTTP-date in a zone RFC 9110 §5.6.7 does not allow
// and parse.HTTPDate rejects, but servers send: "UTC", or a numeric
// offset, which is applied, as package parse reads such a reset (see
// zone.GMT).
func zonedDate(s string, now time.Time) (time.Time, bool) {
	gmt, offset, ok := zone.GMT(s)
	if !ok {
		return time.Time{}, false
	}
	t, ok := parse.HTTPDate(gmt, now)
	if !ok {
		return time.Time{}, false
	}
	return t.Add(-offset), true
}

// servedFor returns how long a cache held the response with header h
// before it came, as far as its Age (RFC 9111 §5.1) and its Date agree:
// the Age, at most the time since the Date by estimate, the server's clock
// as the key estimates it; 0 without either, or with no estimate. (A
// cache, or a server's own fault, may stamp an Age on a refusal made
// just now: its Date, now by the server's clock, says so, and the whole
// delay it asks is waited for.)
func servedFor(h http.Header, estimate time.Time) time.Duration {
	age := cachedFor(h)
	if age <= 0 || estimate.IsZero() {
		return 0
	}
	v, ok := raDate(h)
	if !ok {
		return 0
	}
	date, ok := parse.HTTPDate(v, estimate)
	if !ok {
		return 0
	}
	return min(age, max(estimate.Sub(date), 0))
}

// cachedFor returns how long a cache has held the response with header h:
// its Age (RFC 9111 §5.1), whole seconds; 0 when it has none, or one not
// a single non-negative integer.
func cachedFor(h http.Header) time.Duration {
	v, ok := raSingle(raValues(h, "Age"))
	if !ok {
		return 0
	}
	w, n, st := raDecimal(v)
	switch {
	case st == raInvalid || n != 0 || strings.ContainsRune(v, '.'):
		return 0
	case st == raOverflow || w > math.MaxInt64/int64(time.Second):
		return math.MaxInt64
	}
	return time.Duration(w) * time.Second
}
