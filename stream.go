package polite

import (
	"net/http"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// EventAbandoned: a response body was left unfinished, so its request
// stopped counting in flight before its body ended. Either the request's
// context ended before the body was read at all or closed, or the
// request's lease (Budget.Lease) expired before the body was read to its
// end or closed. Both are usually a bug in the caller's code: every body
// must be closed. A stream that legitimately lasts longer than the lease
// needs a longer Budget.Lease: a context deadline ends a lease sooner,
// never later. A lease that expired, by Budget.Lease or the context's
// deadline, before the body was handed over (a Base slower than either,
// or a Store slow to take the answer) is no caller's fault, and reports
// none. Wait is
// how long the request was in flight. This event is reported from a
// goroutine of its own, not the request's.
const EventAbandoned EventKind = "abandoned"

// streamBody is the body of a response that did not arrive with its
// headers: its request stays in flight (its lease in the budget, its slot
// under the Transport's local ceilings) until the body ends. One
// allocation holds the wrapper and what ending the request needs.
type streamBody struct {
	trackedBody
	t       *Transport
	req     *http.Request
	b       *Budget
	key     budgetKey
	g       lease
	status  int
	attempt int
}

// accepted ends the request g granted, whose response resp was not a
// refusal, and returns resp to hand to the caller. The outcome out is
// applied at once, at arr, when the headers arrived; the request itself
// ends at once if its body came with its headers, and otherwise when its
// body ends (see endsWithHeaders and trackedBody).
func (t *Transport) accepted(req *http.Request, b *Budget, key *budgetKey, g *lease, arr *arrival, out *control.Outcome, resp *http.Response, attempt int) *http.Response {
	if endsWithHeaders(req, resp) {
		if b.mem != nil && !g.ceil.ok {
			// finishAt, with nothing local to free; the controller
			// reads the time of an answer accepted by its instant.
			b.mem.releaseAt(&key.m, arr.wall, arr.ns, &b.cfg, g, out)
		} else {
			t.finishAt(req, b, key, g, arr.time(), arr.ns, out)
		}
		return resp
	}
	now := arr.time()
	out.Keep = true
	t.finishAt(req, b, key, g, now, arr.ns, out)
	t.stream(req, b, key, g, now, resp, attempt)
	return resp
}

// stream hands resp's body the end of the request g granted, which
// finished with Outcome.Keep at now: the request stays in flight until
// the body ends. attempt is its send's (1 for the first).
func (t *Transport) stream(req *http.Request, b *Budget, key *budgetKey, g *lease, now time.Time, resp *http.Response, attempt int) {
	ctx := req.Context()
	deadline, dated := ctx.Deadline()
	if t := g.now(); t.After(now) {
		now = t // handed over now, on the lease's clock: the release before may have taken a Store's time
	}
	if e := g.Expiry(); !e.IsZero() && !e.After(now) || dated && !deadline.After(now) {
		// The lease expired while Base answered, or the budget took its
		// answer, by Budget.Lease or at the context's deadline (the
		// budget's expiry is rounded up to its slot; the deadline is
		// not): the budget no longer counts the request, and the caller,
		// handed the body only now, abandoned nothing.
		t.end(req, b, *key, g, now)
		return
	}
	s := &streamBody{t: t, req: req, b: b, key: *key, g: *g, status: resp.StatusCode, attempt: attempt}
	// A request with no deadline (or one past its lease) ends at the
	// latest when its lease expires, as it does in the budget.
	var expire time.Duration
	if !dated || deadline.After(g.Expiry()) {
		expire = max(g.Expiry().Sub(now), time.Nanosecond)
	}
	resp.Body = s.track(ctx, resp.Body, s, expire)
}

// end ends the request g granted, which finished with Outcome.Keep, at
// now: its slot under the local ceilings, its lease in the budget.
func (t *Transport) end(req *http.Request, b *Budget, key budgetKey, g *lease, now time.Time) {
	if g.ceil.ok {
		t.ceil.end(key.ceil(), &g.ceil)
	}
	note := b.end(req.Context(), key, g, now)
	t.note(req, b, key, now, note)
}

// bodyEnded ends the request: its slot under the local ceilings, its
// lease in the budget.
func (s *streamBody) bodyEnded(how bodyEnd) {
	now := s.g.now()
	t := s.t
	t.end(s.req, s.b, s.key, &s.g, now)
	switch how {
	case bodyContext, bodyExpired:
		if (how == bodyExpired || !s.read.Load()) && t.observed() {
			t.emit(Event{Kind: EventAbandoned, Time: now, Key: s.b.display(s.key), Request: s.req, Attempt: s.attempt, Status: s.status, Wait: now.Sub(s.g.granted())})
		}
	}
}

// reader returns the parse.Reader of the key g was granted under: kept in
// the in-memory store's entry of the key, bounded as the entries are, or,
// for a key whose state a Store keeps elsewhere, one of a fixed few this
// Transport keeps (see ceilings.reader). Neither is part of the key's
// state.
func (t *Transport) reader(key *budgetKey, g *lease) *parse.Reader {
	if g.e != nil {
		return &g.e.rd
	}
	return t.ceil.reader(key.m)
}
