package polite

import (
	"net/http"
	"time"

	"github.com/politehttp/polite/parse"
)

// sentBehind revises quotas, read by package parse from a response with
// header h received at now, whose Date (date) is more than offDate behind
// now, for a request sent at sent. Under such a Date, parse measures an
// absolute reset from now, due when at most a minute past by it
// (parse's justPast), and from the Date when more than a minute past:
// parse knows neither when the request went nor how long the answer
// took. sentBehind does: a limiter states its next reset as it admits
// or refuses a request, after the request was sent, so a server whose
// clock is right (its Date the one that lies) never states one more than
// sentSlack before sent. A reset parse read as due that is earlier than
// that was reckoned on a clock truly that late, and is read from the
// Date, right. A server truly 15 minutes late, stating on each refusal
// the reset its window has 15 minutes left to, is so read after two or
// three refusals instead of the seven a minute of the doubling floor
// took, which could fall on one request and hand it back its refusal
// (TestServerClockBehindHourlyWindow).
//
// sentBehind only moves resets parse read as due from now to the Date. A
// reset parse read from the Date stays: more than a minute past by now,
// it may yet be after sent, stated by a handler of minutes under a Date
// that lies, but a delay reads alike, and the two readings do not tell
// them apart (a Retry-After date, which cannot be a delay, is measured by
// sent either way: see offWait). sentBehind reads h again with rd, the
// key's parse.Reader, from the Date: a second reading for such a Date
// only, which allocates no more than the first. It leaves quotas as parse
// read them when the second reading does not report the same quotas.
func sentBehind(quotas []parse.Quota, h http.Header, rd *parse.Reader, date, sent, now time.Time) {
	var buf [8]parse.Quota
	again, _ := rd.AppendFresh(buf[:0], h, date, date) // every instant measured from the Date
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
		q, d := &quotas[i], again[i].Reset
		if d-q.Reset <= time.Second {
			// A delay, or an instant parse measured from the Date too
			// (or from the key's estimate of the server's clock, less
			// than a second after it).
			continue
		}
		if at := date.Add(d); at.Before(sent.Add(-sentSlack)) { // at: the instant stated
			q.Reset = d
		}
	}
}

// sentSlack is how far before a request was sent a server whose clock is
// right may state the reset in force when it answered it: a second of
// rounding down, and a second of a clock kept by a time service off ours.
const sentSlack = 2 * time.Second

// farBehind reports whether date is more than offDate behind now, as
// package parse reckons it for absolute resets (whole seconds).
func farBehind(date, now time.Time) bool {
	return now.Unix()-date.Unix() > int64(offDate/time.Second)
}
