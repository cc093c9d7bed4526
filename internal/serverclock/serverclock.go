// Package serverclock reads the instants a server states against its
// clock, as polite's Transport and `polite inspect` both read them: the
// Date of an answer, a 403's spent quota whose reset is just past, and,
// by when the request was sent, the instants of an answer whose Date is
// far behind the caller's clock.
//
// Under a Date more than Off behind the caller's clock, package parse
// (and polite's Retry-After reading) takes the Date for one that lies, in
// the wrong zone, and measures an absolute instant from the caller's
// clock instead: due while at most a minute past by that clock, as a
// right reset rounded down, or stated when a slow handler's request was
// admitted, is. A reader that knows when the request went draws a
// narrower line: a limiter whose clock is right states the reset in
// force, or the retry it asks for, as it admits or refuses the request,
// after it was sent, never more than Slack before. An instant earlier
// than that was reckoned on a clock truly that late, and is measured from
// the Date, right: a server 15 minutes late, stating on each refusal the
// reset its window has 15 minutes left to, is read so after two or three
// refusals instead of the seven a minute of the doubling refusal floor
// took. See DESIGN.md, "the server's clock".
package serverclock

import (
	"net/http"
	"strings"
	"time"

	"github.com/politehttp/polite/parse"
)

// Off is how far off the caller's clock a Date may be and still be read
// as the server's clock (parse's maxSkew, polite's offDate).
const Off = 10 * time.Minute

// Slack is how far before a request was sent a server whose clock is
// right may state the reset in force when it answered it, or the retry it
// asks for: a second of rounding down, and a second of a clock kept by a
// time service off ours.
const Slack = 2 * time.Second

// Behind reports whether date is more than Off behind now, in whole
// seconds, as package parse reckons it.
func Behind(date, now time.Time) bool {
	return now.Unix()-date.Unix() > int64(Off/time.Second)
}

// Revise returns the wait until an instant a server stated in an answer
// whose Date, date, is more than Off behind the caller's clock, to a
// request sent at sent: fromNow, the wait as read without knowing sent,
// and fromDate, as measured from the Date. An instant read alike from both
// (within the second an estimate of the server's clock refines the Date
// by) is a delay, or was measured from the Date already: fromNow. One
// read shorter from now is the instant date+fromDate: fromDate when that
// is more than Slack before sent, else fromNow.
func Revise(fromNow, fromDate time.Duration, date, sent time.Time) time.Duration {
	if fromDate-fromNow <= time.Second || !date.Add(fromDate).Before(sent.Add(-Slack)) {
		return fromNow
	}
	return fromDate
}

// Wait returns the wait until the instant base+d, which a server stated
// as an instant (an HTTP-date: never a delay), under a Date or an
// estimate of the server's clock (base) more than Off behind now, for a
// request sent at sent: measured from now while the instant is no more
// than Slack before sent, however long the answer took, else d, from
// base. It is negative when the instant is past.
func Wait(d time.Duration, base, sent, now time.Time) time.Duration {
	if at := base.Add(d); !at.Before(sent.Add(-Slack)) {
		return at.Sub(now)
	}
	return d
}

// Quotas revises the resets of quotas, read from an answer whose Date,
// date, is more than Off behind the caller's clock, to a request sent at
// sent, by again, the same header read from the Date (parse.HeaderAt with
// date for both its instants): see Revise. It leaves quotas as they are
// when again does not report the same quotas in the same order.
func Quotas(quotas, again []parse.Quota, date, sent time.Time) {
	if len(again) != len(quotas) {
		return
	}
	for i := range quotas {
		q, r := &quotas[i], &again[i]
		if q.Unit != r.Unit || q.Policy != r.Policy || q.Limit != r.Limit || q.Remaining != r.Remaining || q.Window != r.Window {
			return
		}
	}
	for i := range quotas {
		quotas[i].Reset = Revise(quotas[i].Reset, again[i].Reset, date, sent)
	}
}

// DateOf returns the instant of h's Date as package parse reads it: its
// first field line, trimmed of optional white space, or the first half of
// one that holds the same date twice, comma-joined (a proxy's join of
// repeated fields); the zero time when it is absent or invalid. now
// places a two-digit year (see parse.HTTPDate).
func DateOf(h http.Header, now time.Time) time.Time {
	vs := h.Values("Date")
	if len(vs) == 0 {
		return time.Time{}
	}
	v := strings.Trim(vs[0], " \t")
	if n := (len(v) - 2) / 2; len(v) > 2 && len(v)%2 == 0 && v[n:n+2] == ", " && v[:n] == v[n+2:] {
		v = v[:n]
	}
	t, _ := parse.HTTPDate(v, now)
	return t
}

// SpentJustPast reports whether h states a quota spent whose reset is at
// most RoundedDown past by base, the server's clock as the caller best
// knows it (its Date), or by now: read that much earlier, the reset is
// still to come. A server that rounds its resets down (ulule/limiter,
// go-limiter) states the reset as its Date when its window ends within
// the second: a 403 so stated, read as an answer, was handed back and the
// next request sent at once, in a loop (180 of 200 refused within a
// millisecond). A real "forbidden" may state a spent quota whose reset is
// long past, and stays an answer. By base, a server truly late, refusing,
// states a reset its Date has to come; by now, a Date far ahead, which
// lies, makes a right reset hours past.
func SpentJustPast(h http.Header, base, now time.Time) bool {
	for _, at := range [2]time.Time{base, now} {
		at = at.Add(-RoundedDown)
		for _, q := range parse.HeaderAt(h, at, at) {
			if q.Remaining == 0 && q.Reset > 0 {
				return true
			}
		}
	}
	return false
}

// RoundedDown is how far past a spent quota's reset may be for a 403 to
// refuse for rate (see SpentJustPast): the second a reset rounded down
// loses, and one more for the way.
const RoundedDown = 2 * time.Second
