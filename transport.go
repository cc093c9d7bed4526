package polite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/internal/serverclock"
	"github.com/politehttp/polite/parse"
)

// Transport is an [http.RoundTripper] that paces requests by what servers say
// about their rate limits, and retries safely when a server refuses one.
//
// Before each request it waits, if it must, for the request's budget (by
// default, one per origin) to allow it: within every quota the server stated
// in RateLimit-Policy (no more than q requests in any span of w), within the
// live quota of RateLimit or a legacy or vendor dialect (no more than r
// requests within t, counting requests already in flight), and within the
// ceilings MaxRate and MaxConcurrency (the Transport's and its Budget's),
// which no header can raise. When
// a quota is spent, or a server refuses a request (429, 503, or a 403 with
// Retry-After or a spent quota), the whole
// origin pauses; after a pause one request probes, and the rest follow as
// answers come back.
//
// The zero value is ready to use. Transports should be reused instead of
// created as needed, since they hold the pacing state of every origin. A
// Transport is safe for concurrent use by multiple goroutines. Its fields
// must not be changed after first use, nor the Transport copied: a copy
// shares the original's pacing state.
type Transport struct {
	// Base is the RoundTripper that sends requests. If nil,
	// http.DefaultTransport is used.
	Base http.RoundTripper

	// Budget holds the pacing state. Transports that share a Budget pace
	// together. If nil, the Transport uses a Budget of its own.
	Budget *Budget

	// Key returns the budget key of a request. Requests with the same key
	// share one budget. If nil, the key is the request's origin, normalised
	// (see the package documentation). A Key keyed by API credential lets
	// one client pace several accounts of one service separately: a key it
	// returns is never shown, only its fingerprint. It must be safe for
	// concurrent use.
	Key func(*http.Request) string

	// MaxWait is the longest wait honoured, for pacing and for retries. A
	// refusal that asks for a longer wait is returned to the caller at once,
	// unaltered, its body unread; a request whose pacing wait is longer,
	// counted from when it first asked (a request held again, when others
	// took the start it woke for, waits no longer in all; a retry of the
	// probe of a server that states nothing, whose own wait was
	// lengthened, from that wait's planned end: see DESIGN.md §6), fails
	// with a *WaitError as soon as that is known, without being sent
	// (again, for a retry: see WaitError.Attempt). If zero or negative, 10
	// minutes (the draft's own example of an excessive window, draft-11
	// §8.5.1).
	MaxWait time.Duration

	// MaxAttempts is how many times one request is sent at most, counting
	// the first. If zero, 8. If one or negative, refusals are never retried.
	MaxAttempts int

	// MaxRate is the most requests per second this Transport starts under
	// one budget key, whatever the server says and whatever other
	// Transports sharing its Budget do. If zero or negative, there is no
	// local rate ceiling; the server's quotas and Budget.MaxRate still apply.
	// Requests it holds start in the order it first held them.
	MaxRate float64

	// MaxConcurrency is the most requests this Transport has in flight
	// under one budget key, whatever the server says and whatever other
	// Transports sharing its Budget do. If zero or negative, there is no
	// local ceiling;
	// Budget.MaxConcurrency still applies.
	MaxConcurrency int

	// Robots, if not nil, makes requests obey the robots.txt of their
	// origin (RFC 9309), or of the virtual host their Host names at their
	// URL's address (see Robots): a path it disallows fails at once with a
	// *RobotsError, without being sent, and its Crawl-delay or
	// Request-rate becomes a floor on the origin's pace that no header can
	// raise. A request is decided before its first wait, and decided
	// again before it goes when the robots.txt it was decided by expired,
	// or may have been replaced (its origin forgotten to make room, and
	// fetched again), while it waited (a retry's wait, or pacing's): a
	// retry is never sent by a file no longer in force. Transports may share one. If
	// nil, robots.txt is not read.
	Robots *Robots

	// Restraint, if not nil, holds back requests to origins that state no
	// rate limit: at most a few in flight at once, fewer while the
	// origin's latency shows it queues them (see Restraint). If nil, an
	// origin that states nothing is bounded only by the other ceilings
	// and by its refusals.
	Restraint *Restraint

	// OnEvent, if not nil, is called with every event of the kinds
	// EventKind lists (a wait, a retry, a give-up, an observation, a stop,
	// a wait that failed, a Store down or back, a request abandoned),
	// synchronously, from the goroutine of the request. The
	// exceptions come from the goroutine that ended a response's body (its
	// Read or Close, or one of the Transport's own when the request's
	// context ended or its lease expired) or from a goroutine of their
	// own: an EventAbandoned, and an EventStoreDown or EventStoreUp found
	// as a body ended or by a request that stopped waiting. It must be
	// quick and safe for concurrent use, and must not panic: some events
	// (an observation, a wait) come while the request holds its grant,
	// which a panic leaves held until its lease expires (Budget.Lease).
	OnEvent func(Event)

	// Logger, if not nil, receives the same events: retries and a Store's
	// recovery at Info; give-ups, stops, WaitErrors, abandoned bodies and a
	// Store's failure at Warn; the rest at Debug. If nil,
	// nothing is logged.
	Logger *slog.Logger

	// RetryTransient, if true, also retries transient failures: a
	// connection reset, refused or timed out, and 502 and 504 responses.
	// Only requests that may be sent twice are resent (GET, HEAD, OPTIONS,
	// TRACE, PUT, DELETE, or any method with an Idempotency-Key or
	// X-Idempotency-Key header) whose body can be replayed, never once the
	// request's context has ended, through the same backoff, retry budget
	// and MaxAttempts as refusals; Retry-After on a 502 or 504 is a floor.
	// The wait is the request's own: the origin does not pause, but in an
	// outage (see "Retries" in the package documentation), where the
	// origin pauses and is probed as for refusals. If false, Base's
	// errors, 502 and 504 go back to the caller at once.
	RetryTransient bool
	// Cost, if not nil, reports what a request will cost against the
	// quotas of its budget key (see [Cost]), for requests whose context
	// declares none with [WithCost]. It is called once per request, before
	// the first attempt, from the goroutine of the request; it must be
	// safe for concurrent use, must not modify the request, and may read
	// its body only through GetBody; if it does, the first attempt is sent
	// with a body from GetBody too, as a retry is (a GetBody may hand out
	// the reader of Body itself). A request with a body GetBody can
	// replay is handed to Cost as a shallow copy, whose GetBody reports
	// its calls: its fields are the request's, not its address. Where
	// GetBody returns Body itself, the copy's GetBody, and its Body from
	// then on, return a wrapper of it whose Close does nothing (the
	// request is still to be sent) and which has no method but Read and
	// Close; the end of the request's context while Cost runs closes
	// Body, which ends a read of it that stalls. If nil,
	// the Transport estimates the
	// request bodies of the main LLM APIs with [EstimateCost]; any other
	// request costs one request.
	Cost func(*http.Request) Cost

	budget Budget   // used when Budget is nil
	ceil   ceilings // MaxRate and MaxConcurrency, per key

	clock  clock                              // reads the instant a request starts
	memo   [memoSlots]atomic.Pointer[keyMemo] // the keys of the origins seen lately
	missed atomic.Uint64                      // originHash of the origin that missed the memo last
}

const (
	defaultMaxWait     = 10 * time.Minute
	defaultMaxAttempts = 8
	drainLimit         = 64 << 10 // bytes of a refused response read before closing it
)

// The fallback backoff, used when a refusal says nothing about how long to
// wait: 1s, 2s, 4s, ... doubling up to 1m, each randomised by ±50%.
const (
	backoffInitial = control.BackoffInitial
	backoffMax     = control.BackoffMax
	backoffFactor  = 2
	backoffRand    = 0.5
)

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// budgetOf returns the Transport's budget, ready.
func (t *Transport) budgetOf() *Budget {
	b := t.Budget
	if b == nil {
		b = &t.budget
	}
	b.init()
	return b
}

func (t *Transport) maxWait() time.Duration {
	if t.MaxWait > 0 {
		return t.MaxWait
	}
	return defaultMaxWait
}

func (t *Transport) maxAttempts() int {
	switch {
	case t.MaxAttempts == 0:
		return defaultMaxAttempts
	case t.MaxAttempts < 1:
		return 1
	}
	return t.MaxAttempts
}

// key returns the budget key of req under b, the Transport's budget: its
// origin, normalised (see originKey), unless Key says otherwise. It returns
// the key a memo of the Transport holds, which is never changed, or else
// buf, set to the key.
func (t *Transport) key(req *http.Request, b *Budget, buf *budgetKey) *budgetKey {
	if t.Key != nil {
		*buf = budgetKey{m: splitKey(t.Key(req)), custom: true}
		return buf
	}
	return t.originOf(req, b, buf)
}

// customKey is key for RoundTrip with Transport.Key set: if Key panics,
// req's body is closed as the panic goes on (see bodyGuard).
func (t *Transport) customKey(req *http.Request, b *Budget, buf *budgetKey) *budgetKey {
	g := bodyGuard{req: req}
	defer g.close()
	k := t.key(req, b, buf)
	g.done = true
	return k
}

// estimate returns req's cost as Transport.Cost, or else the default
// estimate, says, whether it called req.GetBody, and what it did to
// req.Body (see bodyCut): if either panics (Cost, or a GetBody the
// estimate calls), req's body is closed as the panic goes on (see
// bodyGuard). Transport.Cost is handed a copy of req whose GetBody
// reports its calls, when req has a body to replay.
func (t *Transport) estimate(req *http.Request) (_ control.Cost, read bool, cut bodyCut) {
	g := bodyGuard{req: req, cut: &cut}
	defer g.close()
	var cost Cost
	switch {
	case t.Cost == nil:
		if req.Body != nil && req.Body != http.NoBody {
			cost, _, read = estimateBody(req, estimateLimit, &cut.closed)
		}
	case req.GetBody != nil && req.Body != nil && req.Body != http.NoBody:
		cost, read = watchedCost(t.Cost, req, &cut)
	default:
		cost = t.Cost(req)
	}
	g.done = true
	return control.Cost(cost), read, cut
}

// bodyCut is what an estimate did to a request's Body, which GetBody
// returned: the default one closed it as the request's context ended
// (closed: see estimateBody), or a Cost function was handed it (body: see
// watchedCost), which the context's end closes. RoundTrip closes the Body
// through close on its paths that the context's end leads to before the
// first attempt (a wait that fails, a panic of Cost); its other paths
// before the send (robots.txt's recheck, a GetBody that fails) come only
// while the context lasts, when the estimate has closed nothing.
type bodyCut struct {
	closed bool
	body   *ownBody
}

// close closes req.Body unless the estimate did.
func (c *bodyCut) close(req *http.Request) {
	switch {
	case c.body != nil:
		c.body.closeOnce()
	case !c.closed:
		req.Body.Close()
	}
}

// watchedCost returns what cost says of a copy of req whose GetBody
// reports its calls, and whether it read a body GetBody returned; where
// GetBody returns req.Body itself, cut holds its wrapper (see ownBody),
// and the context's end, while cost runs, closes req.Body, which ends a
// read of it that stalls. (Apart, so that the closure moves its variables
// to the heap only here.)
func watchedCost(cost func(*http.Request) Cost, req *http.Request, cut *bodyCut) (_ Cost, read bool) {
	r := *req
	var own *ownBody
	var stop func() bool
	var returned atomic.Bool // cost returned: a GetBody called later sets nothing up
	defer func() {
		returned.Store(true)
		if stop != nil {
			stop()
		}
		cut.body = own // on a panic too: RoundTrip's guard closes through it
	}()
	r.GetBody = func() (io.ReadCloser, error) {
		body, err := req.GetBody()
		read = read || body != nil
		if !sameBody(body, req.Body) {
			return body, err
		}
		// req's own, rewound (the OpenAI and Anthropic SDKs' GetBody):
		// handed out as r's own too, as cost expects of such a GetBody.
		if own == nil && !returned.Load() {
			own = &ownBody{ReadCloser: req.Body}
			if ctx := req.Context(); ctx.Done() != nil {
				o := own
				stop = context.AfterFunc(ctx, func() { o.closeOnce() })
			}
		}
		if own == nil {
			return io.NopCloser(body), err // called after cost returned: the Body is RoundTrip's
		}
		r.Body = own
		return own, err
	}
	return cost(&r), read
}

// ownBody is a request's own Body as a Cost function sees it, when the
// request's GetBody returns that Body: closing it does nothing, for the
// request is still to be sent (closed by the Cost function, it was sent
// closed, and closed again). RoundTrip closes it through closeOnce, and so
// does the end of the request's context while the Cost function runs.
type ownBody struct {
	io.ReadCloser
	closed atomic.Bool
}

// Close does nothing: see ownBody.
func (b *ownBody) Close() error { return nil }

// closeOnce closes the Body unless it was.
func (b *ownBody) closeOnce() error {
	if !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	return b.ReadCloser.Close()
}

// bodyGuard closes a request's body unless done: deferred around caller
// code RoundTrip runs before its first attempt (Key, Cost, a GetBody the
// default estimate calls), it closes the body as a panic of that code goes
// on, as when Base panics sending the request (see send).
type bodyGuard struct {
	req  *http.Request
	done bool
	cut  *bodyCut // what the estimate did to the body; nil: nothing
}

func (g *bodyGuard) close() {
	switch {
	case g.done || g.req.Body == nil:
	case g.cut != nil:
		g.cut.close(g.req)
	default:
		g.req.Body.Close()
	}
}

// local reports whether the Transport has local ceilings to keep: its
// MaxRate and MaxConcurrency, Restraint, or a per-key floor.
func (t *Transport) local() bool {
	return t.MaxRate > 0 || t.MaxConcurrency > 0 || t.Restraint != nil || t.ceil.floors.Load()
}

// RoundTrip implements [http.RoundTripper]. It waits for the request's budget,
// sends the request through Base, learns from the response, and retries a
// refused request when that is safe (see the package documentation). It never
// modifies req.
//
// The error is non-nil only when no response was obtained: Base failed, the
// request's context ended while waiting, the wait would have been too long
// (a *WaitError), robots.txt forbids the request (a *RobotsError), it costs
// more than a whole quota (a *CostError), a retry could not rewind its body
// (GetBody's error), or it has no URL; see "Errors" in the package
// documentation. After the last attempt, a refusal is returned as a
// response with a nil error.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errNilURL // as http.Transport does
	}
	ctx := req.Context()
	b := t.budgetOf()
	var kb budgetKey
	var key *budgetKey // never changed
	if t.Key == nil {
		key = t.originOf(req, b, &kb) // key, inline
	} else {
		key = t.customKey(req, b, &kb)
	}
	attempts := t.maxAttempts()
	var bo retryBackoff
	start := t.clock.read()
	var rv verdict // robots.txt's: the floor it asks between starts to the origin, until when
	if t.Robots != nil {
		var err error
		if err = rv.decide(ctx, t, req, *key, false); err != nil {
			return nil, causeOf(ctx, err) // req.Body is closed
		}
	}
	body := req.Body != nil && req.Body != http.NoBody
	var cost control.Cost // what requestCost says, once: retries cost the same
	priced := true        // cost is set: zero otherwise
	// restart is set when the estimate read the body through GetBody: the
	// first attempt sends a copy of its own from GetBody, as a retry
	// does, for a GetBody may share its reader with req.Body (the
	// official OpenAI and Anthropic SDKs' do, seeking it back to the
	// start), which the estimate then read to its end.
	var restart bool
	var cut bodyCut // what the estimate did to req.Body
	if c, ok := costFrom(ctx); ok {
		cost = control.Cost(c)
	} else if t.Cost != nil || body {
		cost, restart, cut = t.estimate(req)
	} else {
		priced = false
	}
	// What each attempt asks the budget: its After is a retry's wait (see
	// control.Decide), and AfterReason what it is for.
	var qbuf [2]parse.Quota // the quotas of each answer, when they fit
	var ask control.Ask     // field by field: a composite literal is built aside and copied
	ask.Custom = key.custom
	ask.Until, _ = ctx.Deadline()
	ask.Turns = true // held, it starts in the order it first asked
	// Unless robots.txt was read or a cost estimated (which may read the
	// body), the first attempt asks the budget at start: one clock read.
	stale := t.Robots != nil || t.Cost != nil || body

	// After a transient failure, the instant it came: the next attempt's
	// wait, and MaxWait, count from it (zero: from when the attempt asks).
	var from time.Time
	var first reading          // when the first attempt asked
	var firstRefusal time.Time // when the request was first refused
	waited := false            // an attempt was held (see verdict.stale)
	for attempt := 1; ; attempt++ {
		var g lease
		if priced {
			g.SetCost(cost)
		}
		g.floor = rv.floor
		asked := start
		if attempt > 1 || stale {
			asked = t.clock.read()
		}
		if attempt == 1 {
			first = asked
		} else if ask.First.IsZero() {
			ask.First = retryPlace(first, asked)
		}
		// Wait until the budget grants the request (and the local
		// ceilings let it go) as ask asks (not before ask.After, a
		// retry's own wait; zero: no bound), the context ends, or the
		// wait turns out longer than the Transport will wait. The grant
		// is written to g.
		err := ctx.Err()
		if err == nil {
			// held is when this attempt's wait began: from, or when it
			// asked (read only where it waits).
			if b.mem != nil && !t.local() && from.IsZero() {
				// The common case, kept lean: the in-memory store, no
				// local ceiling, no wait begun before (the hold asks
				// as the request that began it, its place in line).
				if h, ok := b.mem.acquireAt(key, asked, &b.cfg, &ask, &g); !ok {
					at := asked.time()
					err = t.hold(req, b, *key, attempt, ask, &g, at, at, &h, &rv, &waited)
				}
			} else {
				held := from
				if held.IsZero() {
					held = asked.time()
				}
				err = t.hold(req, b, *key, attempt, ask, &g, held, asked.time(), nil, &rv, &waited)
			}
			from = time.Time{}
		}
		if err != nil {
			if attempt == 1 && req.Body != nil {
				cut.close(req)
			}
			if we, ok := err.(*WaitError); ok {
				t.waitFailed(req, we, attempt, start.time())
			} else if ce, ok := err.(*CostError); ok && attempt > 1 && t.observed() {
				// A quota another answer stated while the retry waited
				// has no room for it: the retry is not sent, and its
				// events end as the caller's call does, as a retry
				// whose GetBody fails.
				t.emit(Event{Kind: EventGiveUp, Time: time.Now(), Key: ce.Key, Request: req, Attempt: attempt, Reason: ReasonQuota, Err: ce})
			}
			return nil, causeOf(ctx, err)
		}
		if !rv.until.IsZero() && rv.stale(time.Now(), t, waited || attempt > 1) { // (the clock read only with a verdict to judge)
			// The robots.txt req was decided by expired, or may have
			// been replaced, while it waited (a retry's wait, or
			// pacing's; see verdict.stale), after hold decided it again
			// (see redecide): req is decided again by the file in
			// force, its grant held (given back and asked anew,
			// it would wait again behind the start the local ceilings
			// keep for it).
			if err = t.recheck(req, b, key, &g, attempt, &rv); err != nil {
				return nil, causeOf(ctx, err)
			}
		}
		send := req
		if attempt > 1 || restart {
			if send, err = t.rewound(req, b, key, &g, attempt == 1); err != nil {
				// The grant first: a body whose Close panics must not
				// keep it held.
				now := time.Now()
				t.finish(req, b, *key, &g, now, &control.Outcome{Failed: true, Unsent: true})
				if attempt == 1 {
					cut.close(req) // never sent
				}
				if t.observed() {
					// The attempt waited, and is not sent: its events
					// end as the caller's call does.
					t.emit(Event{Kind: EventGiveUp, Time: now, Key: b.display(*key), Request: req, Attempt: attempt, Err: eventError(err, req, *key)})
				}
				return nil, err
			}
		}
		resp, err := t.send(send, b, key, &g)
		if err == nil && send != req && resp.Request == send {
			// As net/http's Transport hands its caller's request back
			// after a retry of its own: the copy was polite's.
			resp.Request = req
		}
		var arr arrival
		g.arrive(&arr)
		g.ceil.answer = sampleAnswer
		if err == nil {
			switch {
			case g.ceil.ok && !g.ceil.quoted && t.Restraint != nil && t.Restraint.Adaptive && parse.FromCache(resp.Header):
				// A cache's answer (an Age above 0), an error too,
				// says nothing of the origin's latency: quick hits
				// taken for its baseline made each answer of the
				// origin itself look queued there.
				g.ceil.answer = sampleNone
			case resp.StatusCode >= 500:
				g.ceil.answer = sampleError
			}
		}
		if err != nil {
			now := arr.time()
			if t.RetryTransient && transientErr(ctx, err) {
				if !t.transient(req, b, *key, &g, now, attempt, attempts, &bo, nil, &control.Outcome{Failed: true, First: attempt == 1}, err, &ask) {
					return nil, err
				}
				from = now // the wait and MaxWait count from the failure
				continue
			}
			t.finish(req, b, *key, &g, now, &control.Outcome{Failed: true, First: attempt == 1})
			return nil, err
		}

		var out control.Outcome
		out.Bytes, out.First = contentBytes(req, resp), attempt == 1
		out.Served = resp.StatusCode >= 200 && resp.StatusCode < 300
		// Fields in trailers are never read (DESIGN.md §1.9). The quotas
		// are read into qbuf, on the stack, and stay out of out, whose
		// Quotas the paths below that may keep it get a copy of on the
		// heap (see ownQuotas): out itself would move qbuf to the heap.
		quotas := readQuotas(qbuf[:], resp.Header, arr.wall, &g, t.reader(key, &g), &out)
		if len(quotas) == 0 && g.Logged() {
			// An answer from a cache gives back its start (see
			// control.Outcome.Cached); looked for only where a stated
			// quota logged it, so that other keys pay nothing.
			out.Cached = parse.FromCache(resp.Header)
		} else if len(quotas) > 0 {
			if spent(quotas) {
				out.Rand = rand.Uint64() // the jitter of the pause (see control.Outcome)
			}
			if t.observed() {
				t.emit(Event{Kind: EventObserve, Time: arr.time(), Key: b.display(*key), Request: req, Attempt: attempt, Status: resp.StatusCode, Quotas: len(quotas)})
			}
		}
		refused := refusal(resp.StatusCode, resp.Header, quotas, &arr, &g, t.reader(key, &g))
		if !refused && b.mem != nil && !g.ceil.ok && endsWithHeaders(req, resp) && !(t.RetryTransient && transientStatus(resp.StatusCode)) {
			// accepted's first case, inline: the common case, whose
			// outcome the in-memory store applies at once and keeps
			// nothing of, so that it reads the quotas in qbuf.
			hot := out
			hot.Quotas = quotas
			b.mem.releaseAccepted(&key.m, &arr, &b.cfg, &g, &hot)
			return resp, nil
		}
		out.Quotas = ownQuotas(quotas)
		if t.RetryTransient && transientStatus(resp.StatusCode) {
			// Also one that cannot go again (the last attempt, a
			// request that cannot be resent, a context ended): a
			// transient failure, not an acceptance, which ended the
			// run of failed flights that makes an outage (see
			// control.State.transient) whenever a key's traffic
			// held a POST. Its body, which may stream, keeps the
			// request in flight, as an answer's does.
			if !t.transient(req, b, *key, &g, arr.time(), attempt, attempts, &bo, resp, &out, nil, &ask) {
				return resp, nil
			}
			from = arr.time() // the wait and MaxWait count from the failure
			continue
		}
		if !refused {
			return t.accepted(req, b, key, &g, &arr, &out, resp, attempt), nil
		}
		now := arr.time()

		// A refusal: gather what the decision needs, and execute its plan
		// (see control.Decide).
		out.Refused, out.Unavailable = true, resp.StatusCode == http.StatusServiceUnavailable
		out.Rejected = resp.StatusCode == http.StatusTooManyRequests
		if out.Rand == 0 {
			out.Rand = rand.Uint64()
		}
		r := &out.Refusal
		var why Reason
		r.Wait, why, r.Given = serverWait(resp.Header, out.Quotas, now, serverNow(&g, now), g.granted(), t.reader(key, &g))
		r.Reason = reasonCode(why)
		if !r.Given {
			r.Backoff = bo.next()
		}
		// Never once the context has ended: the refusal is the answer
		// the caller gets (as for a transient failure).
		r.Retryable = attempt < attempts && retryable(req, resp.StatusCode) && ctx.Err() == nil
		r.Left = attempts - attempt
		if firstRefusal.IsZero() {
			firstRefusal = now
		}
		r.Since = firstRefusal
		r.MaxWait = t.maxWait()
		r.Deadline, _ = ctx.Deadline()
		r.Held = t.localNext(req, key)
		// The refused body is read for drainTime at most in all: its
		// problem document, then the rest before a retry. What is left
		// counts reading only, not the release and the events between.
		drainLeft := drainTime
		if b.mayRetry(ctx, *key, now, r, &g, hasProblem(resp)) {
			// The body may be discarded: read what a problem document
			// says (RFC 9457, draft-11 §5) from a bounded prefix of it.
			// A refusal that goes back to the caller in any case goes
			// back unread.
			var p problem
			began := time.Now()
			resp.Body, p = t.readProblem(ctx, resp, began.Add(drainTime), req, b, key, &g, &out)
			drainLeft -= time.Since(began)
			r.Violated = p.violated
			r.Stop = p.kind == problemAbnormal
		}
		plan := t.finish(req, b, *key, &g, now, &out)

		e := Event{Time: now, Key: b.display(*key), Request: req, Attempt: attempt, Status: resp.StatusCode, Wait: plan.Wait, Reason: reasonOf(plan.Reason)}
		switch {
		case plan.Stop:
			e.Kind = EventStop
			t.emitIf(e)
			return resp, nil
		case !plan.Retry:
			if plan.Denied != control.ReasonNone {
				e.Reason = reasonOf(plan.Denied)
			}
			e.Kind = EventGiveUp
			e.Wait = 0 // the wait the server asked for, if any: not the plan's
			if r.Given {
				e.Wait = r.Wait
			}
			t.emitIf(e)
			return resp, nil
		}
		e.Kind = EventRetry
		if plan.Probed != 0 {
			// A probe's wait lengthened, which ends once the key is
			// accepted again: the least it waits, the wait it had
			// before or longer, as its attempts left require
			// (DESIGN.md §6, "a probe spends an attempt").
			e.Wait = plan.Least
		}
		t.emitIf(e)
		// The retry waits its plan's wait, whether or not the key's
		// pause covers it: a retry spaced out past the pause, the
		// refusal floor of a key not paused, and a key forgotten or
		// evicted meanwhile (Budget.Forget, MaxKeys), whose next state
		// has no pause, so that its retry was sent at once: with 4 keys
		// for 50 origins, 8 attempts a task within 15 ms.
		ask.After, ask.AfterReason, ask.Probed = now.Add(plan.Wait), plan.Reason, plan.Probed
		if plan.Probed != 0 {
			ask.Least = now.Add(plan.Least)
		}
		if plan.Short && ask.Grow < math.MaxUint8 {
			ask.Grow++
		}

		discardUntil(ctx, resp.Body, time.Now().Add(drainLeft))
	}
}

// retryPlace returns the place in line a retry keeps (control.Ask.First):
// first, when its first attempt asked, or, should the clock have stepped
// back since, asked, when the retry first asks (a place after now would
// hold it behind the requests that asked after it).
func retryPlace(first, asked reading) time.Time {
	if first.instant() > asked.instant() {
		return asked.time()
	}
	return first.time()
}

// finish ends the request g granted: it frees its local slot, and applies
// out to its budget key. For a refusal it returns the plan to execute.
// With out.Keep, the request stays in flight, its local slot held, until
// its body ends (see accepted).
func (t *Transport) finish(req *http.Request, b *Budget, key budgetKey, g *lease, now time.Time, out *control.Outcome) control.Plan {
	return t.finishAt(req, b, &key, g, now, control.Instant(now), out)
}

// finishAt is finish at now, whose instant on the controller's clock is ns.
// The budget learns the outcome before the local ceilings do: a quota it
// states lifts Restraint only once the budget knows it, so that a request
// granted between the two does not find the budget without the quota
// Restraint was lifted for, and apply it again (see ceilings.forgot).
func (t *Transport) finishAt(req *http.Request, b *Budget, key *budgetKey, g *lease, now time.Time, ns int64, out *control.Outcome) control.Plan {
	var plan control.Plan
	if b.mem != nil {
		plan = b.mem.releaseAt(&key.m, now, ns, &b.cfg, g, out)
	} else {
		var note storeNote
		plan, note = b.release(req.Context(), *key, g, now, out)
		t.note(req, b, *key, now, note)
	}
	if g.ceil.ok {
		if out.Keep {
			t.ceil.learn(key.ceil(), &g.ceil, now, out, g.Cost()) // the body ends later: see bodyEnded
		} else {
			t.ceil.done(key.ceil(), &g.ceil, now, out, g.Cost())
		}
	}
	return plan
}

// note reports a change of the Store's health.
func (t *Transport) note(req *http.Request, b *Budget, key budgetKey, now time.Time, n storeNote) {
	if n.kind == "" || !t.observed() {
		return
	}
	e := Event{Kind: n.kind, Time: now, Key: b.display(key), Request: req}
	if n.err != nil {
		e.Err = &storeError{err: n.err, key: key.m.String(), shown: e.Key}
	}
	t.emit(e)
}

// storeError is a Store's error as events show it: with a custom key of
// minCredential bytes or more, should its text hold it, as it is, escaped
// as a URL writes it, or quoted (%q escapes a key's quotes and bytes that
// do not print), replaced by how the key is shown.
type storeError struct {
	err        error
	key, shown string
}

func (e *storeError) Error() string {
	s := e.err.Error()
	if e.key != e.shown && len(e.key) >= minCredential {
		// Every spelling, as Base's errors hide a custom key (see
		// logError): a Store reached over HTTP writes the key escaped
		// in a URL. A shorter key is left, as there: replaced, its
		// letters would be wherever they are in the message.
		s = replaceAll(s, keySpellings(e.key), e.shown)
	}
	return "polite: store: " + s
}

func (e *storeError) Unwrap() error { return e.err }

// GoString is Error for %#v, which would otherwise print the key whole.
func (e *storeError) GoString() string { return "&polite.storeError{" + strconv.Quote(e.Error()) + "}" }

// Format writes e as its text for every verb, and as GoString for %#v
// (see formatError).
func (e *storeError) Format(f fmt.State, verb rune) { formatError(f, verb, e.Error(), e.GoString) }

// errNilResponse reports a Base that broke the RoundTripper contract.
var errNilResponse = errors.New("polite: Base returned a nil response and a nil error")

// errNilURL reports a request without a URL, which has no origin to pace.
var errNilURL = errors.New("polite: nil Request.URL")

// send sends req through Base. Should Base panic (or call
// runtime.Goexit), the grant is released and req's body closed while the
// panic goes on, so that the key is not left waiting for an answer that
// will never come, nor the body's writer for a reader that is gone. (Base
// may have closed the body before it panicked: then it is closed twice,
// which every body of net/http allows, rather than never.)
func (t *Transport) send(req *http.Request, b *Budget, key *budgetKey, g *lease) (resp *http.Response, err error) {
	returned, closed := false, false
	defer func() {
		if !returned {
			// The grant first: a body whose Close panics too must not
			// keep it held.
			t.finish(req, b, *key, g, time.Now(), &control.Outcome{Failed: true})
			if req.Body != nil && !closed {
				req.Body.Close()
			}
		}
	}()
	resp, err = t.base().RoundTrip(req)
	// What Base broke of its contract is mended before the grant is
	// the caller's to release: a body whose Close panics then is
	// released as Base's own panic is, above.
	switch {
	case err != nil && resp != nil:
		if resp.Body != nil {
			resp.Body.Close() // an error wins, as in http.Client
		}
		resp = nil
	case resp == nil && err == nil:
		err = errNilResponse
		if req.Body != nil {
			closed = true
			req.Body.Close() // as RoundTrip must on an error, which Base may not have done
		}
	}
	returned = true
	return resp, err
}

// observed reports whether anyone listens to events.
func (t *Transport) observed() bool { return t.OnEvent != nil || t.Logger != nil }

// emitIf emits e if anyone listens. Callers that build costly events check
// observed first.
func (t *Transport) emitIf(e Event) {
	if t.observed() {
		t.emit(e)
	}
}

// try is one attempt to start req: the local ceilings first, then the
// budget.
type try struct {
	granted bool
	ceiling bool            // held by a local ceiling
	until   time.Time       // the hold's end at the earliest; zero: none known
	wake    time.Time       // when to look again at the latest; zero: none
	changed <-chan struct{} // a local ceiling's slot frees
	why     Reason
	h       hold
}

// held records the budget's hold h.
func (w *try) held(h hold) {
	*w = try{h: h, until: h.Until(), wake: h.Wake(), why: reasonOf(h.Reason)}
}

// tickets are a request's places in the lines the local ceilings' pace
// keeps (see ceilings.reserve): its key's, and, under a custom key, its
// origin's floor (see ceilings.reserveFloor).
type tickets struct {
	key, origin uint64
}

// try makes one attempt, written to w; tk holds the request's tickets.
func (t *Transport) try(req *http.Request, b *Budget, key budgetKey, now time.Time, ask control.Ask, g *lease, w *try, tk *tickets) error {
	var res reservation
	local := t.local()
	*w = try{}
	if local {
		var (
			ch ceilingHold
			fr floorReservation
		)
		floor := g.floor // the key's, unless it paces another origin (0 when no origin has one)
		if t.ceil.floors.Load() && (key.custom || req.Host != "" || req.URL.Opaque != "") {
			// A Crawl-delay paces the origin (the one a Host, or an
			// Opaque that is an absolute URL, names), not the key.
			if o := floorOrigin(req, key); o != key.ceil() {
				floor = 0
				if fr, ch, w.granted = t.ceil.reserveFloor(o, now, g.floor, &tk.origin); !w.granted {
					// The key's own pace may hold it longer: the hold
					// says so, as RetryAt does.
					if n := t.ceil.nextStart(key.ceil()); !ch.until.IsZero() && n > ch.until.UnixNano() {
						ch.until, ch.reason = time.Unix(0, n), ReasonPace
					}
					w.ceiling, w.until, w.changed, w.why = true, ch.until, ch.changed, ch.reason
					return nil
				}
			}
		}
		if res, ch, w.granted = t.ceil.reserve(key.ceil(), now, t.MaxRate, t.MaxConcurrency, t.Restraint, floor, &tk.key, ask.Until, b.Lease, b.IdleTTL); !w.granted {
			t.ceil.cancelFloor(fr)
			w.ceiling, w.until, w.wake, w.changed, w.why = true, ch.until, ch.wake, ch.changed, ch.reason
			return nil
		}
		res.floor = fr
	}
	h, granted, note, err := b.acquire(req.Context(), key, now, ask, g)
	if note.kind != "" {
		t.note(req, b, key, now, note)
	}
	if granted && err == nil {
		w.granted = true
		if res.ok && b.mem == nil {
			// The request starts now: Restraint's latency is the
			// origin's, not that of the Store's round trip before it
			// (as for a robots.txt fetch: see recheck).
			res.start = time.Now()
		}
		g.ceil = res
		if res.quoted && !g.Hinted() {
			t.ceil.forgot(key.ceil(), now)
		}
		return nil
	}
	if local {
		t.ceil.cancel(key.ceil(), res)
	}
	w.held(h)
	return err
}

// hold tries to start req at now, unless first says how the in-memory
// store held it then, and waits out each hold until req is granted. Its
// wait, and MaxWait, count from start, which may be earlier: a retry
// after a transient failure counts from the failure. The budget and the
// local ceilings are asked at now, never at start: asked at an instant
// past (the failure's, a drain of its body later), the budget took it for
// the present, and Budget.MaxRate's next start was cut back to one spacing
// after it, so that another request started less than a spacing after
// the last. A request whose robots.txt verdict rv went stale while it
// waited is decided again before it may be granted (see redecide). hold
// sets *waited when the request was held, not granted at once.
func (t *Transport) hold(req *http.Request, b *Budget, key budgetKey, attempt int, ask control.Ask, g *lease, start, now time.Time, first *control.Hold, rv *verdict, waited *bool) (err error) {
	ctx := req.Context()
	w := new(try)
	var tk tickets // its places in the lines of the local pace
	defer func() {
		// Stopped waiting before its turn: its places pass on.
		if tk.key != 0 {
			t.ceil.leave(key.ceil(), tk.key)
		}
		if tk.origin != 0 {
			t.ceil.leave(floorOrigin(req, key), tk.origin)
		}
	}()
	// A retry after a transient failure asks at now, past start: the
	// time between, the drain of the failure's body and the retry's own
	// wait, is held for what that wait was for.
	var before waits
	held := start // when the first hold began
	if now.After(start) {
		before.add(reasonOf(ask.AfterReason), now.Sub(start))
		held = now
	}
	if first != nil {
		w.held(hold{Hold: *first})
	} else if err := t.try(req, b, key, now, ask, g, w, &tk); err != nil {
		return err
	} else if w.granted {
		if before.n > 0 && t.observed() {
			t.emit(Event{Kind: EventWait, Time: now, Key: b.display(key), Request: req, Attempt: attempt, Wait: now.Sub(start), Reason: before.main()})
		}
		return nil
	}
	*waited = true
	// Held: every try from now on asks as the request that first asked
	// at start, its place in line (see control's turn.go), or, for a
	// retry, at its first attempt's; counted in that place's claim if
	// the hold says so.
	ask.Since = start
	if !ask.First.IsZero() {
		ask.Since = ask.First
	}
	ask.Claimed, ask.Placed = !w.ceiling && w.h.Claimed(), !w.ceiling && w.h.Placed()
	defer func() {
		if err != nil && (ask.Claimed || ask.Placed) {
			// The turn it claimed passes on, and its place among
			// those waiting for a slot goes (see control's
			// handoff.go).
			// Its note comes after RoundTrip returned, when req is
			// the caller's again: the event carries no request.
			b.leave(ctx, key, ask.Since, ask.Claimed, ask.Placed, func(n storeNote) { t.note(nil, b, key, time.Now(), n) })
		}
	}()
	var (
		timer *time.Timer
		last  = held                   // when the current hold began
		paced = start                  // what MaxWait counts from
		limit = start.Add(t.maxWait()) // the end of the longest wait honoured
		spent = before                 // time held, by reason

		// A Store's Wait that returned before its instant with nothing
		// changed (the hold after it has the generation waited on) broke
		// its contract; it is not asked again for spuriousPause, so that
		// such a Store is not asked in a loop that never sleeps.
		waitedGen   uint64
		waitedUntil time.Time
		spurious    bool
	)
	if ask.Probed != 0 && ask.After.After(paced) {
		// A probe's retry whose wait was lengthened (DESIGN.md §6):
		// the pace that follows counts from that wait's planned end,
		// though the wait ends early once the key is accepted again.
		// Counted from the refusal, the learned window after it did
		// not fit, and the request failed with a *WaitError.
		paced, limit = ask.After, ask.After.Add(t.maxWait())
	}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	// granted reports the wait of a request granted at now.
	granted := func(now time.Time) {
		if t.observed() {
			t.emit(Event{Kind: EventWait, Time: now, Key: b.display(key), Request: req, Attempt: attempt, Wait: now.Sub(start), Reason: spent.main()})
		}
	}
	// A request held by a local ceiling has not asked the budget yet: one
	// that no wait can make room for fails at once, as the budget would
	// have it (see CostError), not once the ceiling lets it go.
	w.h.Never = w.h.Never || w.ceiling && g.Priced()
	for {
		if w.h.Never {
			c := g.Cost()
			now := time.Now()
			ex, note := b.excess(ctx, key, w.h, now, limit, &c)
			if note.kind != "" {
				t.note(req, b, key, now, note)
			}
			if ex.Unit != "" {
				return &CostError{Key: b.display(key), Unit: ex.Unit, Cost: ex.Cost, Limit: ex.Limit}
			}
			w.h.Never = false // the quota changed meanwhile: look again
		}
		// A request a local ceiling holds has not asked the budget: a
		// pause or spent quota the budget knows holds it at least as
		// long, and one past MaxWait or the deadline fails at once, as
		// it would once the ceiling let the request go (a slot a stream
		// held kept it until its deadline, which ended it with the
		// context's bare error).
		until, why := w.until, w.why
		if w.ceiling {
			if at, r := b.heldAt(key, time.Now()); at.After(until) {
				until, why = at, r
			}
		}
		if !until.IsZero() {
			// MaxWait bounds the wait from when the request first
			// asked, not this hold's: a request held again and again
			// (by others that took the start it woke for) waits no
			// longer than MaxWait in all. The deadline is an instant.
			// When both would be passed, the error names the sooner.
			deadline, dated := ctx.Deadline()
			over := until.After(limit)
			if (over || dated && !until.Before(deadline)) && ask.Grow > 0 {
				// The room a retry the server counted as more asks
				// for (control.Ask.Grow) is more than it may wait
				// for: it asks for the room for its cost alone, as
				// its plan, judged to fit, did, rather than fail.
				ask.Grow = 0
				now := time.Now()
				if err := t.try(req, b, key, now, ask, g, w, &tk); err != nil {
					return err
				}
				if w.granted {
					if spent.n > 0 {
						granted(now) // a request that never waited reports no wait
					}
					return nil
				}
				if !w.ceiling {
					ask.Claimed, ask.Placed = w.h.Claimed(), w.h.Placed()
				}
				continue
			}
			if dated && !until.Before(deadline) && (!over || deadline.Before(limit)) {
				return &WaitError{Key: b.display(key), Delay: until.Sub(last), Until: until, Reason: why, Deadline: true, Limit: max(0, deadline.Sub(last))}
			}
			if over {
				return &WaitError{Key: b.display(key), Delay: until.Sub(paced), Until: until, Reason: why, Limit: t.maxWait()}
			}
		}
		// A hold with no end known (a slot another request holds, a
		// probe awaiting its answer) is woken at MaxWait at the latest.
		if w.ceiling {
			until := w.until
			if until.IsZero() {
				until = w.wake
				if until.IsZero() || until.After(limit) {
					until = limit
				}
			}
			if err := waitLocal(ctx, until, w.changed, &timer); err != nil {
				return err
			}
		} else {
			until := w.until
			if until.IsZero() {
				until = w.wake
				if until.IsZero() || until.After(limit) {
					until = limit
				}
			}
			if spurious {
				if pause := time.Now().Add(spuriousPause); pause.Before(until) {
					until = pause
				}
				if err := waitLocal(ctx, until, nil, &timer); err != nil {
					return err
				}
			} else {
				waitedGen, waitedUntil = w.h.Gen, until
				note, err := b.wait(ctx, key, w.h, until, &timer)
				if note.kind != "" {
					t.note(req, b, key, time.Now(), note)
				}
				if err != nil {
					return err
				}
			}
		}
		waited := !w.ceiling && !spurious
		if err := ctx.Err(); err != nil {
			return err
		}
		now := time.Now()
		if rv.stale(now, t, true) && now.Before(limit) {
			// (Woken at MaxWait, it fails unless granted at once: a
			// grant is decided again after, see recheck.)
			if err := t.redecide(req, b, key, attempt, rv, g, limit); err == errPastLimit {
				return &WaitError{Key: b.display(key), Delay: time.Since(paced), Reason: w.why, Limit: t.maxWait()}
			} else if err != nil {
				return err
			}
			now = time.Now()
		}
		spent.add(w.why, now.Sub(last))
		last = now
		if err := t.try(req, b, key, now, ask, g, w, &tk); err != nil {
			return err
		}
		if !w.granted && !w.ceiling {
			ask.Claimed, ask.Placed = w.h.Claimed(), w.h.Placed()
		}
		if w.granted {
			granted(now)
			return nil
		}
		spurious = waited && !w.ceiling && w.h.Gen == waitedGen && now.Before(waitedUntil)
		if w.until.IsZero() && !now.Before(limit) && ask.Grow > 0 {
			ask.Grow = 0 // as above: once more, for its cost alone
			continue
		}
		if w.until.IsZero() && !now.Before(limit) {
			// Held with no end known for MaxWait: its wait is longer.
			return &WaitError{Key: b.display(key), Delay: now.Sub(paced), Reason: w.why, Limit: t.maxWait()}
		}
	}
}

// spuriousPause is how long a request waits on its own, asking the Store
// nothing, after the Store's Wait returned early with nothing changed.
const spuriousPause = 250 * time.Millisecond

// causeOf returns context.Cause(ctx) for err if err is ctx's own error, as
// net/http's Transport returns a context's end: whichever wait the end
// interrupts, the caller sees the cause it gave (the same error as
// ctx.Err() when it gave none).
func causeOf(ctx context.Context, err error) error {
	if err != nil && err == ctx.Err() {
		return context.Cause(ctx)
	}
	return err
}

// waitLocal waits for a local ceiling: until the instant until (zero:
// none), changed is closed (nil: never), or ctx ends.
func waitLocal(ctx context.Context, until time.Time, changed <-chan struct{}, timer **time.Timer) error {
	var fire <-chan time.Time
	if !until.IsZero() {
		d := time.Until(until)
		if d <= 0 {
			return nil
		}
		if *timer == nil {
			*timer = time.NewTimer(d)
		} else {
			(*timer).Reset(d)
		}
		fire = (*timer).C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-fire:
	case <-changed:
	}
	return nil
}

// waits adds up the time one request waited, by reason, without allocating.
type waits struct {
	n      int
	reason [8]Reason
	d      [8]time.Duration
}

func (w *waits) add(r Reason, d time.Duration) {
	for i := range w.n {
		if w.reason[i] == r {
			w.d[i] += d
			return
		}
	}
	if w.n < len(w.reason) {
		w.reason[w.n], w.d[w.n] = r, d
		w.n++
	}
}

// main returns the reason the request waited longest for.
func (w *waits) main() Reason {
	best := 0
	for i := range w.n {
		if w.d[i] > w.d[best] {
			best = i
		}
	}
	return w.reason[best]
}

// readQuotas returns the quotas h describes, with absolute resets measured
// from the best estimate of when the response was generated by the
// server's clock: its Date, refined by the key's clock skew to less than
// Date's one-second grain (see parse.Reader.Read): the key estimates the
// server's clock between the bounds its Dates prove (internal/control,
// clock.go). The estimate is never a second or more after Date; when it is
// earlier than Date, resets come out longer, which is safe. It records the Date
// sample in out. Rate-limit fields on a response from a cache describe the
// past (draft-11 §7.3; DESIGN.md §1.5): it returns none, and no Date
// sample, for such a response.
//
// The header set is read once, by the key's parse.Reader rd, so that a
// RateLimit-Policy the server repeats is not parsed again, nor a Date seen
// before. Only the wall clock of now is read: it may have no monotonic
// clock reading (see arrival). The quotas are read into buf when they fit.
func readQuotas(buf []parse.Quota, h http.Header, now time.Time, g *lease, rd *parse.Reader, out *control.Outcome) []parse.Quota {
	quotas, date := rd.AppendFresh(buf[:0], h, now, serverNow(g, now))
	if len(quotas) == 0 {
		return nil
	}
	if !date.IsZero() {
		out.Skew, out.Dated = since(now, date), true
		if out.Skew < -serverclock.Off { // rare; implied by serverclock.Behind
			sentBehind(quotas, h, rd, date, now, g)
		}
	}
	return quotas
}

// ownQuotas returns quotas, read into a buffer on the caller's stack, in
// memory of their own on the heap when it is not empty, for an Outcome
// that may be kept: appended to nil, which escape analysis sees holding
// none of the buffer.
func ownQuotas(quotas []parse.Quota) []parse.Quota {
	if len(quotas) == 0 {
		return nil
	}
	return append([]parse.Quota(nil), quotas...)
}

// refusal reports whether a response of status, with header h and quotas,
// refuses its request for its rate: a 429, a 503, or a 403 that says so
// (see forbiddenRefusal), as GitHub answers past its limits (DESIGN.md
// §1.10). Any other 403 is an answer, handed back. The instant arr and g
// estimate the server's clock for a Retry-After date, and rd, the key's
// Reader, judges its Date (see serverBase): read only for a 403.
func refusal(status int, h http.Header, quotas []parse.Quota, arr *arrival, g *lease, rd *parse.Reader) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	case http.StatusForbidden:
		now := arr.time()
		return forbiddenRefusal(h, quotas, now, serverNow(g, now), rd)
	}
	return false
}

// forbiddenAnswer reports whether a 403 with header h, received at now
// outside a request's path (a robots.txt fetch), refuses for rate, its
// quotas read as the Transport reads them: none from a cache. Judged late
// (RetryAt, at now, some time after it was received), a quota it states
// spent counts with its reset past too: the reset may have been to come
// when it arrived (with no Date to measure it from, nothing tells), and the
// Transport then read the 403 as a refusal, which RetryAt must not deny.
// With a Date, the reset is measured from it, as it was on arrival.
func forbiddenAnswer(h http.Header, now time.Time, late bool) bool {
	var rd parse.Reader
	quotas, _ := rd.ReadFresh(h, now, time.Time{})
	if late && serverclock.DateOf(h, now).IsZero() && slices.ContainsFunc(quotas, func(q parse.Quota) bool { return q.Remaining == 0 && q.Reset >= 0 }) {
		return true
	}
	return forbiddenRefusal(h, quotas, now, time.Time{}, nil)
}

// forbiddenRefusal reports whether a 403 with header h and quotas (none for
// a response from a cache, as readQuotas reads them) refuses for rate: it
// has a valid Retry-After, measured as retryAfter does from now,
// estimate and rd, or a quota it states is spent with its reset still to come,
// or just past (see serverclock.SpentJustPast); a remaining count of 0 alone, as a
// 403 for bad credentials may carry, is not enough, nor is a reset long
// past.
func forbiddenRefusal(h http.Header, quotas []parse.Quota, now, estimate time.Time, rd *parse.Reader) bool {
	past := false
	for i := range quotas {
		switch q := &quotas[i]; {
		case q.Remaining != 0:
		case q.Reset > 0:
			return true
		case q.Reset == 0:
			past = true
		}
	}
	if past && serverclock.SpentJustPast(h, serverBase(h, now, estimate, rd), now) {
		return true
	}
	_, ok := retryAfter(h, now, estimate, time.Time{}, rd)
	return ok
}

// serverNow returns now on the server's clock as the key of the request g
// granted estimates it from the server's Dates; the zero time when it has
// none.
func serverNow(g *lease, now time.Time) time.Time {
	skew, ok := g.Skew()
	switch {
	case !ok:
		return time.Time{}
	case skew == 0: // the clocks agree, as usual: no addition
		return now
	}
	return now.Add(skew)
}

// spent reports whether a quota is spent: the one case where the
// controller jitters the outcome of an accepted response (a pause until
// the quota's reset), and so the only one that needs a random draw before
// a refusal.
func spent(quotas []parse.Quota) bool {
	for i := range quotas {
		if quotas[i].Remaining == 0 {
			return true
		}
	}
	return false
}

// since returns t minus now, for a t without a monotonic clock reading
// (a Date), as t.Sub(now) does but more cheaply, saturating beyond about
// 290 years either way.
func since(now, t time.Time) time.Duration {
	const limit = int64(math.MaxInt64/time.Second) - 1
	sec := max(min(t.Unix()-now.Unix(), limit), -limit)
	return time.Duration(sec)*time.Second + time.Duration(t.Nanosecond()-now.Nanosecond())
}

// serverWait returns the wait a refusal asks for: Retry-After, which takes
// precedence (draft-11 §7), a delay less the time a cache held the
// response (see servedFor), else the effective window of a spent quota, in
// any unit (a token quota spent refuses requests too). A Retry-After date
// is measured from the response's Date, unless rd, the key's Reader,
// judges it frozen (see serverBase), else from estimate, the server's
// clock as the key estimates it, else from now, and from now too when
// that is more than 10 minutes off (see retryAfter), unless more than 2 s
// before sent, when the request was sent (see offWait).
func serverWait(h http.Header, quotas []parse.Quota, now, estimate, sent time.Time, rd *parse.Reader) (time.Duration, Reason, bool) {
	if d, delay, ok := retryAfterOf(h, now, estimate, sent, rd); ok {
		if delay {
			// Asked when the response was made: a refusal a cache
			// served (an Age) asks for what is left of it.
			d = max(d-servedFor(h, estimate), 0)
		}
		return d, ReasonRetryAfter, true
	}
	wait, found := time.Duration(0), false
	for _, q := range quotas {
		if q.Remaining == 0 && q.Reset >= 0 {
			wait, found = max(wait, q.Reset), true
		}
	}
	return wait, ReasonQuota, found
}

// retryBackoff is a request's own backoff: its next wait when a refusal or
// a transient failure gives none.
type retryBackoff struct {
	bo    *backoff.ExponentialBackOff // nil until the first wait
	short bool                        // a transient failure's wait was shortened to the deadline
}

// next draws the request's next wait.
func (b *retryBackoff) next() time.Duration {
	if b.bo == nil {
		b.bo = newBackoff()
	}
	return b.bo.NextBackOff()
}

// within returns d, a transient failure's backoff at now, for a request
// whose context is ctx. A wait that would leave the retry less time before
// the context's deadline than the wait itself is shortened, once a
// request, to half of what the deadline leaves (the other half meant for
// the retry's answer), if that is no shorter than the least first wait
// (backoffInitial less its randomisation). Drawn past the deadline, the
// wait made the request give up with time and attempts left: against a
// gateway failing for 35 s, a request under a deadline of a minute failed
// its sixth attempt half a second before the gateway recovered, and its
// seventh would have waited 16 to 48 s, where 25.5 s were left. Once a
// request only, so that a request near its deadline is not sent again and
// again at shorter and shorter waits: the next wait, drawn longer, gives
// the request up as before when it does not fit. The once is spent even
// when a longer wait is the one waited (the server's Retry-After, the
// retry budget's spacing). A refusal's backoff is never shortened: the
// key's pause is the refused request's wait (see control.Decide), and
// one request's deadline does not shorten the pause of all.
func (b *retryBackoff) within(ctx context.Context, now time.Time, d time.Duration) time.Duration {
	if deadline, ok := ctx.Deadline(); ok && !b.short {
		least := time.Duration(float64(backoffInitial) * (1 - backoffRand))
		if half := deadline.Sub(now) / 2; d > half && half >= least {
			d, b.short = half, true
		}
	}
	return d
}

func newBackoff() *backoff.ExponentialBackOff {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = backoffInitial
	bo.MaxInterval = backoffMax
	bo.Multiplier = backoffFactor
	bo.RandomizationFactor = backoffRand
	bo.MaxElapsedTime = 0 // never Stop: MaxAttempts bounds the retries
	bo.Reset()
	return bo
}

// retryable reports whether a refused req may be sent again: its body can be
// replayed, and for a 503 or a 403, the method is idempotent or the request
// carries an idempotency key. A 429 says the server did not process the
// request, so any method may be resent; a 403 promises nothing of the kind.
func retryable(req *http.Request, status int) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	return status == http.StatusTooManyRequests || idempotent(req)
}

// readProblem is readProblem for a refusal whose grant g is held, out
// its outcome as far as it is known. Should resp's body panic as it is
// read (or call runtime.Goexit), the grant is released with the refusal,
// not retried, as the panic goes on: its headers arrived, and the pause
// they ask for stands (released as a failure, with no answer, the key was
// not paused at all). bounded closes the body.
func (t *Transport) readProblem(ctx context.Context, resp *http.Response, until time.Time, req *http.Request, b *Budget, key *budgetKey, g *lease, out *control.Outcome) (body io.ReadCloser, p problem) {
	returned := false
	defer func() {
		if !returned {
			out.Refusal.Retryable = false
			t.finish(req, b, *key, g, time.Now(), out)
		}
	}()
	body, p = readProblem(ctx, resp, until)
	returned = true
	return body, p
}

// rewound is rewind for a retry whose grant g is held. Should GetBody
// panic (or call runtime.Goexit), the grant is released as the panic goes
// on, as send releases it when Base panics: the key's slot was otherwise
// held until its lease expired (Budget.Lease), and every other request
// to the key waited for it.
func (t *Transport) rewound(req *http.Request, b *Budget, key *budgetKey, g *lease, first bool) (send *http.Request, err error) {
	returned := false
	defer func() {
		if !returned {
			if first {
				req.Body.Close() // never sent
			}
			t.finish(req, b, *key, g, time.Now(), &control.Outcome{Failed: true, Unsent: true})
		}
	}()
	send, err = rewind(req, first)
	returned = true
	return send, err
}

// rewind returns the request to send for a retry: req itself when it has no
// body, else a clone with a fresh body from GetBody. req is never modified.
// The clone shares req's Trailer, which polite never writes: a body may fill
// in its values as it is read (see http.Request.Trailer), and the fresh
// body from GetBody fills in req's, which the clone must send. For the
// first attempt (first), sent so after an estimate read GetBody, closing
// the fresh body closes req.Body too, which is never sent: Base closes
// both, as the contract of a RoundTripper asks for req.Body.
func rewind(req *http.Request, first bool) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	if first {
		if body == nil {
			return req, nil // no copy: req's own is all there is
		}
		if sameBody(body, req.Body) {
			return req, nil // req's own, rewound: closing it closes it once
		}
		body = standIn{body, req.Body}
	}
	r := req.Clone(req.Context())
	r.Body, r.Trailer = body, req.Trailer
	return r, nil
}

// standIn is a body from GetBody sent in the place of a request's own,
// orig: closing it closes both.
type standIn struct {
	io.ReadCloser
	orig io.Closer
}

func (s standIn) Close() error {
	defer s.orig.Close()
	return s.ReadCloser.Close()
}

// drainTime bounds the time spent reading a refused response's body, as
// drainLimit and problemPrefix bound its bytes: a refusal's body normally
// arrives with its headers, and one that trickles in (a byte every 100 ms)
// is cut by closing it once drainTime has passed, or as soon as the
// request's context ends. That costs the connection, not the caller's
// time; the wait before a retry runs on meanwhile, since a key's pause is
// an instant. The cut relies on Close interrupting a Read in progress, as
// it does on net/http's bodies; a Base whose bodies' Close does not (one
// wrapping them in io.NopCloser over a reader that blocks) is read until
// its Read returns.
const drainTime = time.Second

// cutter closes a body read under a bound (see bounded) once, whichever
// of the bound and the reader closes it first.
type cutter struct {
	body   io.Closer
	closed atomic.Bool
}

func (c *cutter) cut() {
	if c.closed.CompareAndSwap(false, true) {
		c.body.Close()
	}
}

// bounded calls read, which reads body, and closes body if read has not
// returned by until or once ctx ends, which interrupts it. It reports
// whether body was so closed. Should read panic, body is closed as the
// panic goes on.
func bounded(ctx context.Context, body io.Closer, until time.Time, read func()) (cut bool) {
	c := &cutter{body: body}
	d := time.Until(until)
	if ctx.Err() != nil || d <= 0 {
		c.cut()
		return true
	}
	timer := time.AfterFunc(d, c.cut)
	stop := context.AfterFunc(ctx, c.cut)
	returned := false
	defer func() {
		timer.Stop()
		stop()
		if !returned {
			// read panicked (or called runtime.Goexit): body is
			// closed as the panic goes on, once, and no cut fires
			// later from a goroutine of its own.
			c.cut()
		}
	}()
	read()
	returned = true
	// Whichever fired first closed body; marked closed now, it is left to
	// the caller, and a cut that fires late does nothing.
	return !c.closed.CompareAndSwap(false, true)
}

// discard reads at most drainLimit bytes of body, for at most drainTime
// and while ctx lasts, so that the connection can be reused, and closes
// it. A nil body (a Base may return one) is nothing to read.
func discard(ctx context.Context, body io.ReadCloser) {
	discardUntil(ctx, body, time.Now().Add(drainTime))
}

// discardUntil is discard, reading until until at the latest: what is
// left of drainTime once a problem document was read from body.
func discardUntil(ctx context.Context, body io.ReadCloser, until time.Time) {
	if body == nil {
		return
	}
	if !bounded(ctx, body, until, func() { io.CopyN(io.Discard, body, drainLimit) }) {
		body.Close()
	}
}

// CloseIdleConnections closes the idle connections of Base, if it has such a
// method, as [http.Transport] does.
func (t *Transport) CloseIdleConnections() {
	type closeIdler interface{ CloseIdleConnections() }
	if c, ok := t.base().(closeIdler); ok {
		c.CloseIdleConnections()
	}
}
