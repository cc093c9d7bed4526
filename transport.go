package polite

import (
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v4"
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
// local ceilings MaxRate and MaxConcurrency, which no header can raise. When
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
	// share one budget. If nil, the key is the request's origin (scheme,
	// host and port). A Key keyed by API credential lets one client pace
	// several accounts of one service separately. It must be safe for
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

	// MaxRate is the most requests per second started under one budget key,
	// whatever the server says. If zero, there is no local rate ceiling; the
	// server's own quotas still apply.
	MaxRate float64

	// MaxConcurrency is the most requests in flight under one budget key,
	// whatever the server says. If zero, there is no local ceiling.
	MaxConcurrency int

	// OnEvent, if not nil, is called with every wait, retry, give-up and
	// observation, synchronously, from the goroutine of the request. It must
	// be quick and safe for concurrent use.
	OnEvent func(Event)

	// Logger, if not nil, receives the same events: retries at Info,
	// give-ups at Warn, the rest at Debug. If nil, nothing is logged.
	Logger *slog.Logger

	budget Budget // used when Budget is nil
}

const (
	defaultMaxWait     = 10 * time.Minute
	defaultMaxAttempts = 8
	drainLimit         = 64 << 10 // bytes of a refused response read before closing it
)

// The fallback backoff, used when a refusal says nothing about how long to
// wait: 1s, 2s, 4s, ... doubling up to 1m, each randomised by ±50%.
const (
	backoffInitial = time.Second
	backoffMax     = time.Minute
	backoffFactor  = 2
	backoffRand    = 0.5
)

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

func (t *Transport) store() store {
	if t.Budget != nil {
		return t.Budget.store()
	}
	return t.budget.store()
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

func (t *Transport) key(req *http.Request) originKey {
	if t.Key != nil {
		return originKey{host: t.Key(req)}
	}
	return originKey{scheme: req.URL.Scheme, host: req.URL.Host}
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
	st := t.store()
	key := t.key(req)
	c := ceilings{maxRate: t.MaxRate, maxConc: t.MaxConcurrency}
	attempts := t.maxAttempts()
	var bo *backoff.ExponentialBackOff

	for attempt := 1; ; attempt++ {
		g, err := t.wait(req, st, key, c, attempt)
		if err != nil {
			if attempt == 1 && req.Body != nil {
				req.Body.Close()
			}
			return nil, err
		}
		send := req
		if attempt > 1 {
			if send, err = rewind(req); err != nil {
				st.release(g, time.Now(), outcome{failed: true})
				return nil, err
			}
		}
		resp, err := t.send(send, st, g)
		now := time.Now()
		if err != nil {
			st.release(g, now, outcome{failed: true})
			return nil, err
		}

		out := outcome{bytes: resp.ContentLength, first: attempt == 1}
		// Rate-limit fields on a response from a cache describe the past
		// (draft-11 §7.3, D5); fields in trailers are never read (D9).
		if !parse.FromCache(resp.Header) {
			out.quotas = readQuotas(resp.Header, now, g, &out)
			if len(out.quotas) > 0 && t.observed() {
				t.emit(Event{Kind: EventObserve, Time: now, Key: key.String(), Request: req, Attempt: attempt, Status: resp.StatusCode, Quotas: len(out.quotas)})
			}
		}
		refused := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
		if !refused {
			st.release(g, now, out)
			return resp, nil
		}

		wait, why, given := serverWait(resp.Header, out.quotas, now)
		if !given {
			if bo == nil {
				bo = newBackoff()
			}
			wait, why = bo.NextBackOff(), ReasonBackoff
			if g.window {
				// The end of a window: the first probe is not put off
				// by this request's earlier refusals.
				wait = min(wait, backoffInitial)
			}
			if !g.measuring.IsZero() {
				// The origin is being measured (see learner): probe again
				// after half the time it has refused so far, so that the
				// window is known to within half of itself, not to within
				// a doubled backoff.
				wait = min(wait, max(backoffInitial/4, now.Sub(g.measuring)/2))
			}
		}
		deadline, ok := ctx.Deadline()
		out.wantRetry = attempt < attempts && wait <= t.maxWait() && retryable(req, resp.StatusCode) && (!ok || !now.Add(wait).After(deadline))
		// A wait the server gave is a floor: jitter only lengthens the
		// pause, and is added after the wait was judged.
		out.refused, out.pause, out.reason = true, wait, why
		if given {
			// ...but never past MaxWait on its account.
			out.pause = min(addSat(wait, jitter(wait/10)), max(wait, t.maxWait()))
		}
		if out.wantRetry {
			// The body would be discarded: read what a problem document
			// says (RFC 9457, draft-11 §5) from a bounded prefix of it.
			var p problem
			resp.Body, p = readProblem(resp)
			out.violated = p.violated
			if p.kind == problemAbnormal {
				out.stop, out.wantRetry = true, false
			}
		}
		retry, denied := st.release(g, now, out)

		switch {
		case out.stop:
			t.emitIf(Event{Kind: EventStop, Time: now, Key: key.String(), Request: req, Attempt: attempt, Status: resp.StatusCode, Wait: wait, Reason: why})
			return resp, nil
		case out.wantRetry && !retry:
			why = denied
			fallthrough
		case !retry:
			t.emitIf(Event{Kind: EventGiveUp, Time: now, Key: key.String(), Request: req, Attempt: attempt, Status: resp.StatusCode, Wait: wait, Reason: why})
			return resp, nil
		}
		t.emitIf(Event{Kind: EventRetry, Time: now, Key: key.String(), Request: req, Attempt: attempt, Status: resp.StatusCode, Wait: wait, Reason: why})
		discard(resp.Body)
	}
}

// errNilResponse reports a Base that broke the RoundTripper contract.
var errNilResponse = errors.New("polite: Base returned a nil response and a nil error")

// send sends req through Base. Should Base panic, the grant is released
// before the panic goes on, so that the origin is not left waiting for an
// answer that will never come.
func (t *Transport) send(req *http.Request, st store, g grant) (*http.Response, error) {
	defer func() {
		if p := recover(); p != nil {
			st.release(g, time.Now(), outcome{failed: true})
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

// wait blocks until the budget grants req under key, the context ends, or
// the wait turns out longer than the Transport will wait.
func (t *Transport) wait(req *http.Request, st store, key originKey, c ceilings, attempt int) (grant, error) {
	ctx := req.Context()
	var (
		timer *time.Timer
		start time.Time
		last  time.Time // when the current hold began
		why   Reason    // its reason
		spent waits     // time held, by reason
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return grant{}, err
		}
		now := time.Now()
		g, h := st.acquire(key, now, c)
		if !start.IsZero() {
			spent.add(why, now.Sub(last))
		}
		if h.changed == nil {
			if !start.IsZero() && t.observed() {
				t.emit(Event{Kind: EventWait, Time: now, Key: key.String(), Request: req, Attempt: attempt, Wait: now.Sub(start), Reason: spent.main()})
			}
			return g, nil
		}
		if start.IsZero() {
			start = now
		}
		last, why = now, h.reason
		if h.wait > t.maxWait() {
			return grant{}, &WaitError{Key: key.String(), Delay: h.wait, Until: now.Add(h.wait), Reason: h.reason}
		}
		if deadline, ok := ctx.Deadline(); ok && h.wait > 0 && now.Add(h.wait).After(deadline) {
			return grant{}, &WaitError{Key: key.String(), Delay: h.wait, Until: now.Add(h.wait), Reason: h.reason, Deadline: true}
		}
		var fire <-chan time.Time
		if h.wait > 0 {
			if timer == nil {
				timer = time.NewTimer(h.wait)
			} else {
				timer.Reset(h.wait)
			}
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return grant{}, ctx.Err()
		case <-fire:
		case <-h.changed:
		}
	}
}

// addSat returns a+b for non-negative durations, saturating instead of
// overflowing.
func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
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
// Date's one-second grain (see parse.HeaderAt). A Date has whole seconds, so
// Date minus receive time falls short of the true skew by up to a second;
// the origin keeps the highest sample, which is never too high. The
// estimate is never a second or more after Date; when it is earlier than
// Date, resets come out longer, which is safe. It records the Date sample
// in out, and parses the Date only when h has rate-limit fields.
func readQuotas(h http.Header, now time.Time, g grant, out *outcome) []parse.Quota {
	var base time.Time
	if g.skewOK {
		base = now.Add(g.skew)
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
	out.skew, out.dated = date.Sub(now), true
	if g.skewOK && base.Sub(date) >= time.Second {
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
