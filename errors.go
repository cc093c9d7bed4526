package polite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// ErrWaitTooLong is matched by every [*WaitError]: an attempt of the request
// was not sent because the wait it needed was longer than the Transport
// will wait.
var ErrWaitTooLong = errors.New("polite: wait too long")

// WaitError reports that an attempt of a request was not sent because the
// wait its origin needed was longer than [Transport.MaxWait] or would
// outlast the request's context deadline. It carries the wait so that the
// caller can reschedule the work instead of retrying at once. The first
// attempt fails so before the request is ever sent; a retry's, after
// earlier attempts were sent and refused (see Attempt).
//
// A WaitError matches [ErrWaitTooLong] with [errors.Is]. When the cause was
// the request's context deadline it also matches [context.DeadlineExceeded],
// as net/http's own timeouts do, although the deadline has not passed yet:
// the wait would have ended after it.
//
// Its text rounds durations as a log record does (to the microsecond below
// a millisecond, to the millisecond below 10 seconds, to a tenth of a
// second above), names the limit and the setting that changes it, and
// gives Until in UTC, rounded up to the second:
//
//	polite: retry-after wait of 24h0m0s for https://api.example exceeds MaxWait (10m0s); raise Transport.MaxWait or retry after 2026-01-02T15:04:05Z
//
// A refusal that goes back to the caller as a response, rather than as a
// WaitError, says when its origin accepts a request again through
// [Transport.RetryAt]: the same instant the WaitError of the next request
// would carry in Until, or later when a pace holds the request again after
// the wait.
type WaitError struct {
	// Key is the budget key: the origin, or, for a key from a custom
	// Transport.Key, its fingerprint ("key-" and 8 hex digits), never the
	// key itself.
	Key string
	// Delay is how long the request would have had to wait: in all,
	// since it first asked (a retry of a transient failure, since the
	// failure; the retry of a probe whose own wait was lengthened, since
	// that wait's planned end: see Transport.MaxWait), against MaxWait;
	// from when it failed, against the time
	// left before its deadline. Held behind requests that asked before it
	// (their turns come first), it is the least: until theirs may start.
	Delay time.Duration
	// Until is when the wait would have ended (held behind requests that
	// asked before it, the earliest it could have: when they may start,
	// which they do before it); zero when no end was known (a concurrency
	// slot held by a request still in flight), the wait having lasted
	// MaxWait.
	Until  time.Time
	Reason Reason // what the wait was for
	// Deadline reports whether the request's context deadline, rather than
	// MaxWait, is what the wait would have outlasted.
	Deadline bool
	// Limit is the wait that was allowed: MaxWait, or, when Deadline, the
	// time left before the deadline.
	Limit time.Duration
	// Waited is how long the request had spent in RoundTrip, waiting or
	// on earlier attempts, when it failed.
	Waited time.Duration
	// Attempt is the attempt that was not sent, counting from 1: above 1,
	// the request was sent Attempt-1 times, and refused each time (429,
	// 503, or a transient failure retried), the responses closed.
	Attempt int

	// client reports that the request came with Request.Cancel set, as
	// http.Client sets it when its Timeout is set and its Transport is not
	// net/http's own: the deadline may be the Client's Timeout.
	client bool
}

// Error says the wait, the limit and what changes it. An http.Client's
// Timeout reaches the Transport only as a context deadline, without a cause
// (context.Cause is the bare context.DeadlineExceeded): it is named as the
// possible source when the client set Request.Cancel, which it does, for a
// Transport other than its own, exactly when Timeout is set.
func (e *WaitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "polite: %s wait of %v for %s ", e.Reason, roundDuration(e.Delay), e.Key)
	fix := "raise Transport.MaxWait"
	switch {
	case !e.Deadline:
		fmt.Fprintf(&b, "exceeds MaxWait (%v)", roundDuration(e.Limit))
	case e.client:
		fmt.Fprintf(&b, "exceeds the %v left before the request's deadline (http.Client.Timeout, or its context's if earlier)", roundDuration(e.Limit))
		fix = "raise http.Client.Timeout or the context's deadline,"
	default:
		fmt.Fprintf(&b, "exceeds the %v left before the request's context deadline", roundDuration(e.Limit))
		fix = "extend the context's deadline,"
	}
	if e.Deadline && e.Waited > 0 {
		fmt.Fprintf(&b, ", after waiting %v", roundDuration(e.Waited))
	}
	fmt.Fprintf(&b, "; %s or retry after %s", fix, retryStamp(e.Until))
	return b.String()
}

// waitFailed completes we, which the request's attempt got from the wait,
// for the caller: how long the request had been in RoundTrip since start,
// and whether an http.Client's Timeout may have set its deadline; and
// reports it as an EventWaitError.
func (t *Transport) waitFailed(req *http.Request, we *WaitError, attempt int, start time.Time) {
	now := time.Now()
	we.Waited, we.Attempt = now.Sub(start), attempt
	//lint:ignore SA1019 http.Client sets Cancel when its Timeout is set: the only sign of it.
	we.client = req.Cancel != nil
	t.emitIf(Event{Kind: EventWaitError, Time: now, Key: we.Key, Request: req, Attempt: attempt, Wait: we.Delay, Reason: we.Reason, Err: we})
}

// retryStamp formats t for an error text: in UTC, rounded up to the second,
// so that retrying at the instant printed is never too early.
func retryStamp(t time.Time) string {
	if t.IsZero() {
		return "the wait"
	}
	u := t.UTC()
	if r := u.Truncate(time.Second); r.Before(u) {
		u = r.Add(time.Second)
	}
	return u.Format(time.RFC3339)
}

// Is reports whether target is [ErrWaitTooLong], or [context.DeadlineExceeded]
// when the wait would have outlasted the context deadline.
func (e *WaitError) Is(target error) bool {
	return target == ErrWaitTooLong || (e.Deadline && target == context.DeadlineExceeded)
}

// Timeout reports whether the wait would have outlasted the context
// deadline (Deadline), as net/http's own timeouts report theirs: so the
// *url.Error an http.Client returns says Timeout too.
func (e *WaitError) Timeout() bool { return e.Deadline }

// RetryAt reports when the budget key of resp, a refusal (a 429, a 503, or
// a 403 that t read as one: see "Retries" in the package documentation)
// that t returned, accepts a request again, as t knows it now: the end of the
// key's pause (the wait the server asked for, lengthened by jitter, and at
// most 24 hours), or of a spent quota's window, or, later, the next start
// the key's paces allow (a stated quota's q per w, Budget.MaxRate) or the
// Transport's own (MaxRate, a Crawl-delay); the instant a *WaitError of the
// next request to the key would carry in Until, or later when a pace
// holds the request again after a pause. It is now when the key is
// neither paused nor spent nor paced (or was forgotten meanwhile): a
// request may go at once. resp.Request must be set, as http.Transport and ratelimittest
// set it.
//
// RetryAt reports false when resp is nil, has no Request, or is not a
// refusal. A 403 with no Date stating a quota spent is taken for a
// refusal once its reset has passed too: that reset may have been to come
// when it arrived (a Date tells).
// It reads the budget at time.Now(); [Transport.Inspect] reports
// the key's whole state at any instant.
func (t *Transport) RetryAt(resp *http.Response) (time.Time, bool) {
	if resp == nil || resp.Request == nil || resp.Request.URL == nil {
		return time.Time{}, false
	}
	now := time.Now()
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
	case http.StatusForbidden: // a refusal when it says so
		if !forbiddenAnswer(resp.Header, now, true) {
			return time.Time{}, false
		}
	default:
		return time.Time{}, false
	}
	b := t.budgetOf()
	var kb budgetKey
	k := t.key(resp.Request, b, &kb)
	at := now
	if st, ok := b.inspect(k.m, now, k.custom, false); ok {
		at = st.acceptsAt(now)
	}
	if n := t.localNext(resp.Request, k); !n.IsZero() && n.After(at) {
		at = n
	}
	return at, true
}

// localNext returns when the Transport's own ceilings (its MaxRate, a
// Crawl-delay of the key or of its origin) let the next request under k,
// req's key, start; the zero time when none is set.
func (t *Transport) localNext(req *http.Request, k *budgetKey) time.Time {
	if !t.local() {
		return time.Time{}
	}
	next := t.ceil.nextStart(k.ceil())
	if t.ceil.floors.Load() {
		if o := floorOrigin(req, *k); o != k.ceil() {
			next = max(next, t.ceil.nextStart(o))
		}
	}
	if next == 0 {
		return time.Time{}
	}
	return time.Unix(0, next)
}

// Reason says why a request waits.
type Reason string

// The reasons a request can wait for.
const (
	ReasonPace        Reason = "pace"         // spreading requests within a policy's quota (q per w) or the local MaxRate
	ReasonQuota       Reason = "quota"        // the live quota (r) is spent: waiting out its effective window (t)
	ReasonRetryAfter  Reason = "retry-after"  // the server asked for it with Retry-After
	ReasonBackoff     Reason = "backoff"      // a refusal that gave no wait: exponential fallback with jitter
	ReasonAdaptive    Reason = "adaptive"     // pacing by a quota learned from refusals, for servers that say little or lie
	ReasonRetryBudget Reason = "retry-budget" // retries to the origin used up their share of its traffic
	ReasonStopped     Reason = "stopped"      // the origin reported abnormal usage: no retries for a while
	ReasonConcurrency Reason = "concurrency"  // too many requests in flight for the origin
	ReasonProbe       Reason = "probe"        // after a pause, one request probes before the others follow
	ReasonCrawlDelay  Reason = "crawl-delay"  // the interval the origin's robots.txt asks between requests (Transport.Robots)
	// ReasonTransient: a transient failure (a connection error, a 502 or
	// a 504) retried by backoff, with Transport.RetryTransient; it never
	// pauses the key.
	ReasonTransient Reason = "transient"
)

// reasons maps the controller's reason codes to Reasons.
var reasons = [...]Reason{
	control.ReasonNone:        "",
	control.ReasonPace:        ReasonPace,
	control.ReasonQuota:       ReasonQuota,
	control.ReasonRetryAfter:  ReasonRetryAfter,
	control.ReasonBackoff:     ReasonBackoff,
	control.ReasonAdaptive:    ReasonAdaptive,
	control.ReasonRetryBudget: ReasonRetryBudget,
	control.ReasonStopped:     ReasonStopped,
	control.ReasonConcurrency: ReasonConcurrency,
	control.ReasonProbe:       ReasonProbe,
	control.ReasonTransient:   ReasonTransient,
}

// reasonOf returns the Reason of a controller's reason code.
func reasonOf(r control.Reason) Reason {
	if int(r) < len(reasons) {
		return reasons[r]
	}
	return ""
}

// reasonCode returns the controller's code of a Reason.
func reasonCode(r Reason) control.Reason {
	for i, v := range reasons {
		if v == r {
			return control.Reason(i)
		}
	}
	return control.ReasonNone
}
