package parse

import (
	"math"
	"strings"
	"time"

	"github.com/politehttp/polite/internal/zone"
)

// This file implements the number, duration and reset rules of the
// package documentation ("Normalisation"), the magnitude rule included.

// Status of a parsed decimal.
const (
	numInvalid  = iota // not ^\d+(\.\d+)?$
	numOK              // valid and the whole part fits int64
	numOverflow        // valid grammar, but the whole part does not fit int64
)

// decimal parses s by the grammar ^\d+(\.\d+)?$. It returns the whole part
// and the fraction in units of 1e-9 (digits past the ninth are dropped).
// Signs, exponents, hex, NaN, Inf and underscores are invalid, unlike for
// [strconv.ParseFloat].
func decimal(s string) (whole, nano int64, status int) {
	i := 0
	for n := min(len(s), maxSafeDigits); i < n; i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		whole = whole*10 + int64(d)
	}
	if i == 0 {
		return 0, 0, numInvalid
	}
	for i < len(s) && isDigit(s[i]) { // past maxSafeDigits digits
		d := int64(s[i] - '0')
		if status != numOverflow {
			if whole > (math.MaxInt64-d)/10 {
				status = numOverflow
			} else {
				whole = whole*10 + d
			}
		}
		i++
	}
	if i < len(s) {
		if s[i] != '.' || i+1 == len(s) {
			return 0, 0, numInvalid
		}
		scale := int64(1e8)
		for _, c := range []byte(s[i+1:]) {
			if !isDigit(c) {
				return 0, 0, numInvalid
			}
			nano += int64(c-'0') * scale
			scale /= 10
		}
	}
	if status == numOverflow {
		return math.MaxInt64, 0, numOverflow
	}
	return whole, nano, numOK
}

// maxSafeDigits is the number of decimal digits that always fit an int64.
const maxSafeDigits = 18

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// count parses a non-negative count such as a limit or a remaining value.
// Decimal notation is accepted ("99.0" is 99); a fraction is dropped.
// It returns -1 when s is not a valid count.
func count(s string) int64 {
	n, _, st := decimal(trimOWS(s))
	if st != numOK {
		return -1
	}
	return n
}

// quickCount reads the field lines vals when they are one line of one to
// 18 ASCII digits and nothing else, the shape servers send, as
// count(single(vals)) would; ok is false for any other shape.
func quickCount(vals []string) (n int64, ok bool) {
	if len(vals) != 1 {
		return 0, false
	}
	return digitsOnly(vals[0])
}

// seconds converts whole seconds plus nano billionths to a Duration,
// saturating at the largest Duration instead of wrapping.
func seconds(whole, nano int64) time.Duration {
	if whole > (math.MaxInt64-nano)/int64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(whole)*time.Second + time.Duration(nano)
}

// deltaSeconds parses a delay in decimal seconds ("64.57"). It returns -1
// when s is not a valid number.
func deltaSeconds(s string) time.Duration {
	w, n, st := decimal(trimOWS(s))
	if st != numOK {
		return -1
	}
	return seconds(w, n)
}

// Boundaries of the magnitude rule (package documentation, "Normalisation").
const (
	epochSeconds = 1e9  // at or above: epoch seconds
	epochMillis  = 1e12 // at or above: epoch milliseconds
	epochMicros  = 1e15 // at or above: epoch microseconds
	tooLarge     = 1e18 // at or above: invalid
)

// reset reads a generic *-Reset value: a bare number by the magnitude
// rule (see the boundaries above), or a date string (RFC 3339 / ISO 8601
// including minute precision and fractional seconds, or an HTTP-date).
// Absolute instants are measured from base and clamped at 0.
// Several field lines, and comma-joined duplicates, are unknown unless
// the whole value is a date. It returns -1 when the value is unknown.
func reset(vals []string, base, now time.Time) time.Duration {
	if len(vals) == 1 {
		if w, ok := digitsOnlyLong(vals[0]); ok {
			return magnitude(w, 0, base, now)
		}
	}
	return resetGeneral(vals, base, now)
}

// resetGeneral is reset without its quick path for one line of digits.
func resetGeneral(vals []string, base, now time.Time) time.Duration {
	s, ok := single(vals)
	if !ok {
		if len(vals) == 0 {
			return -1
		}
		// Okta has sent the field twice (OKTA-112507). An HTTP-date holds
		// a comma, so try the whole value as a date before giving up.
		s = trimOWS(strings.Join(vals, ", "))
		if t, ok := date(s, now); ok {
			return since(t, base, now)
		}
		return -1
	}
	w, n, st := decimal(s)
	switch st {
	case numInvalid:
		if t, ok := date(s, now); ok {
			return since(t, base, now)
		}
		return -1
	case numOverflow:
		return -1
	}
	return magnitude(w, n, base, now)
}

// magnitude reads a bare *-Reset number of whole part w and fraction n
// in units of 1e-9 by the magnitude rule, measuring absolute instants
// from base, or now (see since); -1 when it is too large.
func magnitude(w, n int64, base, now time.Time) time.Duration {
	switch {
	case w >= tooLarge:
		return -1
	case w < epochSeconds && !nearUnix(w, base):
		return seconds(w, n)
	case w < epochMillis:
		return sinceUnix(w, n, base, now)
	case w < epochMicros:
		return sinceUnix(w/1e3, w%1e3*1e6+n/1e3, base, now)
	default:
		return sinceUnix(w/1e6, w%1e6*1e3+n/1e6, base, now)
	}
}

// nearUnix reports whether sec, seconds after the Unix epoch, is an
// instant whatever its magnitude: a year or more (no delta a server
// means), and within a year of base. A clock before 2001 (a
// testing/synctest bubble's starts in 2000) sends epoch resets below 1e9,
// which the magnitude rule alone read as 30 years. (A device whose clock
// was never set, its Date in 1970, keeps its deltas: a reset of "60" is
// not an instant of 1970.)
func nearUnix(sec int64, base time.Time) bool {
	d := sec - base.Unix()
	return sec >= nearYear && -nearYear < d && d < nearYear
}

// nearYear is the year of nearUnix, in seconds.
const nearYear = 366 * 24 * 3600

// sinceUnix is since for the instant sec seconds and nsec nanoseconds
// (below a second) after the Unix epoch, without building it when it is
// within a century of base and now.
func sinceUnix(sec, nsec int64, base, now time.Time) time.Duration {
	d := max(untilUnix(sec, nsec, base), 0)
	if behind(base, now) || d == 0 && behind(now, base) {
		return closer(d, untilUnix(sec, nsec, now), base, now)
	}
	return d
}

// untilUnix is the instant sec seconds and nsec nanoseconds after the
// Unix epoch less base, negative when past, as time.Time's Sub has it.
func untilUnix(sec, nsec int64, base time.Time) time.Duration {
	const century = 100 * 366 * 24 * 3600
	if d := sec - base.Unix(); -century < d && d < century {
		return time.Duration(d)*time.Second + time.Duration(nsec-int64(base.Nanosecond()))
	}
	return time.Unix(sec, nsec).Sub(base)
}

// since returns t - base clamped at 0: a reset in the past is due now.
// base is the server's clock (its Date, or the caller's estimate of it),
// which cancels the skew of a clock that is off. But a base more than
// maxSkew off now is more likely a Date that lies, in the wrong zone or
// frozen, than a server's clock that far off (see closer): measured from
// a Date hours behind, a reset the server reckoned on a right clock would
// hold the client for hours; from one hours ahead, every reset is past.
func since(t, base, now time.Time) time.Duration {
	d := max(t.Sub(base), 0)
	if behind(base, now) || d == 0 && behind(now, base) {
		return closer(d, t.Sub(now), base, now)
	}
	return d
}

// closer returns the delay until an instant: d measured from base,
// clamped at 0, or dn, measured from now, for a base more than maxSkew
// off now. Behind, dn, clamped at 0, unless the instant is more than
// justPast past by now: a right reset rounded down, or stated when the
// request was admitted, before a slow handler ran, is past by now by a
// little, but one past by more was reckoned on a clock truly that late (a
// reset such a server states again on each refusal goes past justPast
// within the refusal floor's doublings, and is then read from base,
// right). dn read wrong (a clock truly that late) costs a few refusals,
// which the refusal floor spaces out; d read wrong costs hours. Ahead,
// with d 0, dn when the instant is more than maxSkew past by base, which
// no server states as its next reset, and at most maxSkew ahead by now: a
// server truly that far ahead, stating a reset that stale, is waited for
// maxSkew at most, in vain.
func closer(d, dn time.Duration, base, now time.Time) time.Duration {
	switch {
	case behind(base, now):
		if dn >= -justPast {
			return max(dn, 0)
		}
	case 0 < dn && dn <= maxSkew && behind(now.Add(dn), base):
		return dn
	}
	return d
}

// behind reports whether base is more than maxSkew behind now.
func behind(base, now time.Time) bool {
	return now.Unix()-base.Unix() > int64(maxSkew/time.Second)
}

// justPast is how far past by the caller's clock a reset measured from
// that clock under a Date far behind may be and still be due (see
// closer): a second of rounding down, and the time the response took (a
// limiter states its reset as it admits the request).
const justPast = time.Minute

// maxSkew is how far off the caller's clock the server's may be read as
// a clock that is off rather than a Date that lies: more than the drift
// of a clock kept by no time service for months, less than the least
// offset of a wrong zone (30 minutes).
const maxSkew = 10 * time.Minute

// single returns the only field line of vals, trimmed of optional white
// space. ok is false when there is no line, several lines, or a comma.
func single(vals []string) (s string, ok bool) {
	if len(vals) != 1 {
		return "", false
	}
	s = trimOWS(vals[0])
	if s == "" || strings.IndexByte(s, ',') >= 0 {
		return "", false
	}
	return s, true
}

// isOWS reports whether c is optional white space (RFC 9110 §5.6.3).
func isOWS(c byte) bool { return c == ' ' || c == '\t' }

// trimOWS trims optional white space (RFC 9110 §5.6.3: SP and HTAB).
func trimOWS(s string) string {
	if s == "" || !isOWS(s[0]) && !isOWS(s[len(s)-1]) {
		return s
	}
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// date parses a reset instant: RFC 3339 / ISO 8601 or an HTTP-date.
func date(s string, now time.Time) (time.Time, bool) {
	if t, ok := iso8601(s); ok {
		return t, true
	}
	if t, ok := HTTPDate(s, now); ok {
		return t, true
	}
	return zonedDate(s, now)
}

// zonedDate parses an HTTP-date in a zone RFC 9110 §5.6.7 does not allow
// and HTTPDate rejects, but servers send: "UTC" (some Go rate limiters
// send such resets and Retry-After values), or a numeric offset, which is
// applied (see zone.GMT).
func zonedDate(s string, now time.Time) (time.Time, bool) {
	gmt, offset, ok := zone.GMT(s)
	if !ok {
		return time.Time{}, false
	}
	t, ok := HTTPDate(gmt, now)
	if !ok {
		return time.Time{}, false
	}
	return t.Add(-offset), true
}

// iso8601 parses the RFC 3339 profile of ISO 8601 seen in reset fields,
// YYYY-MM-DDTHH:MM[:SS[.frac]](Z|±HH:MM|±HHMM). Seconds may be missing
// (Jira sends "2024-03-26T16:01Z") and the fraction may have any number of
// digits (Mastodon sends microseconds); digits past the ninth are dropped.
// "T" and "Z" may be lower case, and "T" a space (Python's str of a
// datetime), as RFC 3339 §5.6 allows.
func iso8601(s string) (time.Time, bool) {
	if len(s) < len("2006-01-02T15:04Z") || s[4] != '-' || s[7] != '-' ||
		(s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' {
		return time.Time{}, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return time.Time{}, false
	}
	sec, nsec := 0, 0
	rest := s[16:]
	if len(rest) > 0 && rest[0] == ':' {
		if len(rest) < 3 {
			return time.Time{}, false
		}
		var ok bool
		if sec, ok = digits(rest[1:3]); !ok {
			return time.Time{}, false
		}
		rest = rest[3:]
		if len(rest) > 0 && rest[0] == '.' {
			i, scale := 1, int(1e8)
			for i < len(rest) && isDigit(rest[i]) {
				nsec += int(rest[i]-'0') * scale
				scale /= 10
				i++
			}
			if i == 1 {
				return time.Time{}, false
			}
			rest = rest[i:]
		}
	}
	var offset int
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':',
		len(rest) == 5 && (rest[0] == '+' || rest[0] == '-'):
		oh, ok1 := digits(rest[1:3])
		om, ok2 := digits(rest[len(rest)-2:])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return time.Time{}, false
		}
		offset = (oh*60 + om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, false
	}
	if !validClock(hour, minute, sec) || month < 1 || month > 12 || day < 1 ||
		day > daysIn(time.Month(month), year) {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), true
}

// digits parses a run of ASCII digits.
func digits(s string) (int, bool) {
	n := 0
	for _, c := range []byte(s) {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(s) > 0
}

// validClock reports whether h:m:s is a time of day; second 60 is a leap
// second (RFC 9110 §5.6.7, RFC 3339 §5.6), which [time.Date] normalises
// to the next minute.
func validClock(h, m, s int) bool {
	return h <= 23 && m <= 59 && s <= 60
}

// daysIn returns the number of days in month m of year y.
func daysIn(m time.Month, y int) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// goDuration reads an OpenAI-style reset: a Go duration string such as
// "6m0s", "1m51.535s" or "12ms", or a bare number, read by the magnitude
// rule as a legacy *-Reset is: delta seconds below 1e9 (Azure OpenAI
// sends "55"), else an epoch instant (some OpenAI-compatible servers send
// epoch seconds), measured from base, which is called only then. Signs
// and unknown units such as "1d" are invalid. It returns -1 when s is not
// valid, or longer than a Duration holds.
func goDuration(vals []string, base func() time.Time, now time.Time) time.Duration {
	if len(vals) == 1 && vals[0] != "" {
		// A bare number ends with a digit, and a duration that
		// quickDuration reads with a unit: each is tried only where it may
		// read the line. What quickDuration reads has no sign, no white
		// space and no comma: the checks of goDurationGeneral would pass
		// it.
		if s := vals[0]; isDigit(s[len(s)-1]) {
			if w, ok := digitsOnly(s); ok {
				return bareReset(w, 0, base, now)
			}
		} else if d, ok := quickDuration(s); ok {
			return d
		}
	}
	return goDurationGeneral(vals, base, now)
}

// goDurationGeneral is goDuration without its quick paths for one line of
// digits or of a duration as sent (quickDuration still reads a trimmed
// value; FuzzQuickDuration checks it against time.ParseDuration).
func goDurationGeneral(vals []string, base func() time.Time, now time.Time) time.Duration {
	s, ok := single(vals)
	if !ok {
		return -1
	}
	if w, n, st := decimal(s); st == numOK {
		return bareReset(w, n, base, now)
	} else if st == numOverflow {
		return -1
	}
	if !isDigit(s[0]) && s[0] != '.' {
		return -1 // no sign: time.ParseDuration would accept "-1s" and "+1s"
	}
	d, ok := quickDuration(s)
	if ok {
		return d
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return -1
	}
	return d
}

// bareReset is magnitude for a bare number of goDuration, calling base
// only for an instant.
func bareReset(w, n int64, base func() time.Time, now time.Time) time.Duration {
	if w < nearYear {
		return seconds(w, n) // no instant, whatever base (see nearUnix)
	}
	return magnitude(w, n, base(), now)
}
