// Package lateclock reads again, by when the request was sent, the
// instants a server states under a Date far behind the caller's clock.
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
package lateclock

import (
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
