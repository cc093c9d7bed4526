package polite

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/politehttp/polite/internal/control"
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
// a quota is spent, or a server refuses a request with 429 or 503, the whole
// origin pauses; after a pause one request probes, and the rest follow as
// answers come back.
//
// The zero value is ready to use. Transports should be reused instead of
// created as needed, since they hold the pacing state of every origin. A
// Transport is safe for concurrent use by multiple goroutines. Its fields
// must not be changed after first use.
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
	// unaltered; a request whose pacing wait is longer fails at once with a
	// *WaitError, without being sent. If zero, 10 minutes (the draft's own
	// example of an excessive window, draft-11 §8.5.1).
	MaxWait time.Duration

	// MaxAttempts is how many times one request is sent at most, counting
	// the first. If zero, 8. If one or negative, refusals are never retried.
	MaxAttempts int

	// MaxRate is the most requests per second this Transport starts under
	// one budget key, whatever the server says and whatever other
	// Transports sharing its Budget do. If zero, there is no local rate
	// ceiling; the server's quotas and Budget.MaxRate still apply.
	MaxRate float64

	// MaxConcurrency is the most requests this Transport has in flight
	// under one budget key, whatever the server says and whatever other
	// Transports sharing its Budget do. If zero, there is no local ceiling;
	// Budget.MaxConcurrency still applies.
	MaxConcurrency int

	// OnEvent, if not nil, is called with every wait, retry, give-up and
	// observation, synchronously, from the goroutine of the request. It must
	// be quick and safe for concurrent use.
	OnEvent func(Event)

	// Logger, if not nil, receives the same events: retries at Info,
	// give-ups at Warn, the rest at Debug. If nil, nothing is logged.
	Logger *slog.Logger

	budget Budget   // used when Budget is nil
	ceil   ceilings // MaxRate and MaxConcurrency, per key
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

// key returns the budget key of req: its origin, normalised (see
// originKey), unless Key says otherwise.
func (t *Transport) key(req *http.Request) budgetKey {
	if t.Key != nil {
		return budgetKey{m: splitKey(t.Key(req)), custom: true}
	}
	return originKey(req.URL.Scheme, req.URL.Host)
}

// local reports whether the Transport has local ceilings to keep: its
// MaxRate and MaxConcurrency, or a per-key floor.
func (t *Transport) local() bool {
	return t.MaxRate > 0 || t.MaxConcurrency > 0 || t.ceil.floors.Load()
}

// RoundTrip implements [http.RoundTripper]. It waits for the request's budget,
// sends the request through Base, learns from the response, and retries a
// refused request when that is safe (see the package documentation). It never
// modifies req.
//
// The error is non-nil only when no response was obtained: Base failed, the
// request's context ended while waiting, or the wait would have been too long
// (a *WaitError). After the last attempt, a refusal is returned as a response
// with a nil error.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	b := t.budgetOf()
	key := t.key(req)
	attempts := t.maxAttempts()
	var bo *backoff.ExponentialBackOff
	var after time.Time // a retry's wait (see control.Decide)

	for attempt := 1; ; attempt++ {
		var g lease
		err := t.wait(req, b, key, attempt, after, &g)
		if err != nil {
			if attempt == 1 && req.Body != nil {
				req.Body.Close()
			}
			return nil, err
		}
		send := req
		if attempt > 1 {
			if send, err = rewind(req); err != nil {
				t.finish(req, b, key, &g, time.Now(), &control.Outcome{Failed: true})
				return nil, err
			}
		}
		resp, err := t.send(send, b, key, &g)
		now := time.Now()
		if err != nil {
			t.finish(req, b, key, &g, now, &control.Outcome{Failed: true})
			return nil, err
		}

		out := control.Outcome{Bytes: resp.ContentLength, First: attempt == 1}
		// Rate-limit fields on a response from a cache describe the past
		// (draft-11 §7.3; DESIGN.md, D5); fields in trailers are never
		// read (D9).
		if !parse.FromCache(resp.Header) {
			out.Quotas = readQuotas(resp.Header, now, &g.Lease, &out)
			if len(out.Quotas) > 0 {
				out.Rand = rand.Uint64()
				if t.observed() {
					t.emit(Event{Kind: EventObserve, Time: now, Key: b.display(key), Request: req, Attempt: attempt, Status: resp.StatusCode, Quotas: len(out.Quotas)})
				}
			}
		}
		if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
			t.finish(req, b, key, &g, now, &out)
			return resp, nil
		}

		// A refusal: gather what the decision needs, and execute its plan
		// (see control.Decide).
		out.Refused = true
		if out.Rand == 0 {
			out.Rand = rand.Uint64()
		}
		r := &out.Refusal
		var why Reason
		r.Wait, why, r.Given = serverWait(resp.Header, out.Quotas, now)
		r.Reason = reasonCode(why)
		if !r.Given {
			if bo == nil {
				bo = newBackoff()
			}
			r.Backoff = bo.NextBackOff()
		}
		r.Retryable = attempt < attempts && retryable(req, resp.StatusCode)
		r.MaxWait = t.maxWait()
		r.Deadline, _ = ctx.Deadline()
		if r.Retryable {
			// The body may be discarded: read what a problem document
			// says (RFC 9457, draft-11 §5) from a bounded prefix of it.
			var p problem
			resp.Body, p = readProblem(resp)
			r.Violated = p.violated
			r.Stop = p.kind == problemAbnormal
		}
		plan := t.finish(req, b, key, &g, now, &out)

		e := Event{Time: now, Key: b.display(key), Request: req, Attempt: attempt, Status: resp.StatusCode, Wait: plan.Wait, Reason: reasonOf(plan.Reason)}
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
			t.emitIf(e)
			return resp, nil
		}
		e.Kind = EventRetry
		t.emitIf(e)
		if plan.Reason == control.ReasonRetryBudget {
			after = now.Add(plan.Wait) // spaced out past the key's pause
		}
		discard(resp.Body)
	}
}

// finish ends the request g granted: it frees its local slot, and applies
// out to its budget key. For a refusal it returns the plan to execute.
func (t *Transport) finish(req *http.Request, b *Budget, key budgetKey, g *lease, now time.Time, out *control.Outcome) control.Plan {
	if t.local() {
		t.ceil.done(key.m)
	}
	if b.mem != nil {
		return b.mem.release(key.m, now, &b.cfg, g, out)
	}
	plan, note := b.release(req.Context(), key, g, now, out)
	t.note(req, b, key, now, note)
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

// storeError is a Store's error as events show it: with the key, should
// its text hold it, replaced by how the key is shown.
type storeError struct {
	err        error
	key, shown string
}

func (e *storeError) Error() string {
	s := e.err.Error()
	if e.key != "" && e.key != e.shown {
		s = strings.ReplaceAll(s, e.key, e.shown)
	}
	return "polite: store: " + s
}

func (e *storeError) Unwrap() error { return e.err }

// errNilResponse reports a Base that broke the RoundTripper contract.
var errNilResponse = errors.New("polite: Base returned a nil response and a nil error")

// send sends req through Base. Should Base panic, the grant is released
// before the panic goes on, so that the key is not left waiting for an
// answer that will never come.
func (t *Transport) send(req *http.Request, b *Budget, key budgetKey, g *lease) (*http.Response, error) {
	defer func() {
		if p := recover(); p != nil {
			t.finish(req, b, key, g, time.Now(), &control.Outcome{Failed: true})
			panic(p)
		}
	}()
	resp, err := t.base().RoundTrip(req)
	switch {
	case err != nil && resp != nil:
		resp.Body.Close() // an error wins, as in http.Client
		resp = nil
	case resp == nil && err == nil:
		err = errNilResponse
	}
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

// wait blocks until the budget grants req under key (and the local
// ceilings let it go), not before after (a retry spaced out by the retry
// budget; zero: no bound), the context ends, or the wait turns out longer
// than the Transport will wait. The grant is written to g.
func (t *Transport) wait(req *http.Request, b *Budget, key budgetKey, attempt int, after time.Time, g *lease) error {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		return err
	}
	ask := control.Ask{Custom: key.custom, After: after}
	ask.Until, _ = ctx.Deadline()
	now := time.Now()
	if b.mem != nil && !t.local() {
		// The common case, kept lean: the in-memory store, no local
		// ceiling.
		h, ok := b.mem.acquire(key.m, now, &b.cfg, ask, g)
		if ok {
			return nil
		}
		return t.hold(req, b, key, attempt, ask, g, now, &h)
	}
	return t.hold(req, b, key, attempt, ask, g, now, nil)
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

// try makes one attempt, written to w.
func (t *Transport) try(req *http.Request, b *Budget, key budgetKey, now time.Time, ask control.Ask, g *lease, w *try) error {
	var res reservation
	local := t.local()
	*w = try{}
	if local {
		var ch ceilingHold
		if res, ch, w.granted = t.ceil.reserve(key.m, now, t.MaxRate, t.MaxConcurrency); !w.granted {
			w.ceiling, w.until, w.changed, w.why = true, ch.until, ch.changed, ch.reason
			return nil
		}
	}
	h, granted, note, err := b.acquire(req.Context(), key, now, ask, g)
	if note.kind != "" {
		t.note(req, b, key, now, note)
	}
	if granted && err == nil {
		w.granted = true
		return nil
	}
	if local {
		t.ceil.cancel(key.m, res)
	}
	w.held(h)
	return err
}

// hold tries to start req at start, unless first says how the in-memory
// store held it then, and waits out each hold until req is granted.
func (t *Transport) hold(req *http.Request, b *Budget, key budgetKey, attempt int, ask control.Ask, g *lease, start time.Time, first *control.Hold) error {
	ctx := req.Context()
	w := new(try)
	if first != nil {
		w.held(hold{Hold: *first})
	} else if err := t.try(req, b, key, start, ask, g, w); err != nil || w.granted {
		return err
	}
	var (
		timer *time.Timer
		last  = start // when the current hold began
		spent waits   // time held, by reason
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if !w.until.IsZero() {
			d := w.until.Sub(last)
			if d > t.maxWait() {
				return &WaitError{Key: b.display(key), Delay: d, Until: w.until, Reason: w.why}
			}
			if deadline, ok := ctx.Deadline(); ok && w.until.After(deadline) {
				return &WaitError{Key: b.display(key), Delay: d, Until: w.until, Reason: w.why, Deadline: true}
			}
		}
		if w.ceiling {
			if err := waitLocal(ctx, w.until, w.changed, &timer); err != nil {
				return err
			}
		} else {
			until := w.until
			if until.IsZero() {
				until = w.wake
			}
			note, err := b.wait(ctx, key, w.h, until, &timer)
			if note.kind != "" {
				t.note(req, b, key, time.Now(), note)
			}
			if err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		now := time.Now()
		spent.add(w.why, now.Sub(last))
		last = now
		if err := t.try(req, b, key, now, ask, g, w); err != nil {
			return err
		}
		if w.granted {
			if t.observed() {
				t.emit(Event{Kind: EventWait, Time: now, Key: b.display(key), Request: req, Attempt: attempt, Wait: now.Sub(start), Reason: spent.main()})
			}
			return nil
		}
	}
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
// server's clock: its Date, refined by the origin's clock skew to less than
// Date's one-second grain (see parse.HeaderAt): the origin estimates its
// clock between the bounds its Dates prove (internal/control, clock.go).
// The estimate is never a second or more after Date. It records the Date
// sample in out, and parses the Date only when h has rate-limit fields.
func readQuotas(h http.Header, now time.Time, g *control.Lease, out *control.Outcome) []parse.Quota {
	var base time.Time
	skew, skewOK := g.Skew()
	if skewOK {
		base = now.Add(skew)
	}
	quotas := parse.HeaderAt(h, now, base)
	if len(quotas) == 0 {
		return nil
	}
	v := h["Date"]
	if len(v) == 0 {
		return quotas
	}
	date, ok := parse.HTTPDate(v[0], now)
	if !ok {
		return quotas
	}
	out.Skew, out.Dated = date.Sub(now), true
	if skewOK && base.Sub(date) >= time.Second {
		// The skew no longer fits this server's clock: trust its Date.
		quotas = parse.HeaderAt(h, now, date)
	}
	return quotas
}

// serverWait returns the wait a refusal asks for: Retry-After, which takes
// precedence (draft-11 §7), else the effective window of a spent quota, in
// any unit (a token quota spent refuses requests too).
func serverWait(h http.Header, quotas []parse.Quota, now time.Time) (time.Duration, Reason, bool) {
	if d, ok := RetryAfter(h, now); ok {
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
// replayed, and for a 503, the method is idempotent or the request carries an
// idempotency key. A 429 says the server did not process the request, so any
// method may be resent.
func retryable(req *http.Request, status int) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	if status == http.StatusTooManyRequests {
		return true
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return req.Header.Get("Idempotency-Key") != "" || req.Header.Get("X-Idempotency-Key") != ""
}

// rewind returns the request to send for a retry: req itself when it has no
// body, else a clone with a fresh body from GetBody. req is never modified.
func rewind(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = body
	return r, nil
}

// discard reads at most drainLimit bytes of body, so that the connection
// can be reused, and closes it.
func discard(body io.ReadCloser) {
	io.CopyN(io.Discard, body, drainLimit)
	body.Close()
}

// CloseIdleConnections closes the idle connections of Base, if it has such a
// method, as [http.Transport] does.
func (t *Transport) CloseIdleConnections() {
	type closeIdler interface{ CloseIdleConnections() }
	if c, ok := t.base().(closeIdler); ok {
		c.CloseIdleConnections()
	}
}
