package polite

import (
	"net/http"
	"slices"
	"time"

	"github.com/politehttp/polite/internal/serverclock"
	"github.com/politehttp/polite/parse"
)

// sentBehind revises quotas, read by package parse from a response with
// header h received at now, whose Date (date) is more than offDate behind
// now, to the request of the lease g, sent when it was granted (see
// package serverclock): parse measures an absolute reset from now under
// such a Date, due when at most a minute past by it, knowing neither when
// the request went nor how long the answer took. A reset parse read as
// due that is more than 2 s before the request was sent is read from the
// Date. A reset parse read from the Date stays: more than a minute past
// by now, it may yet be after the request was sent, stated by a handler
// of minutes under a Date that lies, but a delay reads alike, and the two
// readings do not tell them apart (a Retry-After date, which cannot be a
// delay, is measured by the send time either way: see offWait).
//
// sentBehind reads h again with rd, the key's parse.Reader, from the
// Date: a second reading for such a Date only, which allocates no more
// than the first.
func sentBehind(quotas []parse.Quota, h http.Header, rd *parse.Reader, date, now time.Time, g *lease) {
	sent := g.granted()
	if sent.IsZero() || !serverclock.Behind(date, now) || !slices.ContainsFunc(quotas, func(q parse.Quota) bool { return q.Reset == 0 }) {
		// An instant before sent is past by now: parse read it as 0.
		// A Date far behind with resets to come reads nothing again.
		return
	}
	var buf [8]parse.Quota
	again, _ := rd.AppendFresh(buf[:0], h, date, date) // every instant measured from the Date
	serverclock.Quotas(quotas, again, date, sent)
}
