package polite

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// Transient failures (Transport.RetryTransient): a connection that failed,
// or a gateway that could not reach the origin (502) or timed out waiting
// for it (504). They are retried only for requests that may be sent twice
// (idempotent, or carrying an idempotency key; RFC 9110 §9.2.2) and whose
// body can be replayed, through the request's own backoff (the schedule of
// refusals that gave no wait, with Retry-After as a floor), the key's retry
// budget and MaxAttempts, shared with refusals. The wait belongs to the
// request: a transient failure says nothing about the origin's rate limit,
// so the key does not pause.

// transientStatus reports whether a response with this status is a
// transient failure: 502 (Bad Gateway) or 504 (Gateway Timeout).
func transientStatus(code int) bool {
	return code == http.StatusBadGateway || code == http.StatusGatewayTimeout
}

// transientErr reports whether err, from Base for a request whose context
// is ctx, is a transient connection failure. It reads only error types and
// values, never error text:
//
//   - never when the request's context has ended, checked first: a context
//     deadline is a net.Error whose Timeout is true, and so is
//     http.Transport's ResponseHeaderTimeout;
//   - never a certificate or TLS failure, http.ErrSchemeMismatch, a
//     *url.Error (a client's error, about a URL or after its own retries), a
//     malformed address or a *WaitError;
//   - a connection reset, aborted or broken (ECONNRESET, ECONNABORTED,
//     EPIPE), or one that ended early (io.EOF, io.ErrUnexpectedEOF);
//   - a DNS failure only when it timed out or is temporary (not "no such
//     host");
//   - a failure to dial (a *net.OpError with Op "dial": refused, unreachable);
//   - any other net.Error whose Timeout is true.
func transientErr(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var (
		we  *WaitError
		ue  *url.Error
		cve *tls.CertificateVerificationError
		rhe tls.RecordHeaderError
		ale tls.AlertError
		uae x509.UnknownAuthorityError
		hne x509.HostnameError
		cie x509.CertificateInvalidError
		ade *net.AddrError
		pae *net.ParseError
		dne *net.DNSError
		ope *net.OpError
		ne  net.Error
	)
	switch {
	case errors.As(err, &we), errors.As(err, &ue), errors.Is(err, http.ErrSchemeMismatch),
		errors.As(err, &cve), errors.As(err, &rhe), errors.As(err, &ale),
		errors.As(err, &uae), errors.As(err, &hne), errors.As(err, &cie),
		errors.As(err, &ade), errors.As(err, &pae):
		return false
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.As(err, &dne):
		// Before "dial": a lookup that failed comes wrapped in one.
		return dne.IsTimeout || dne.IsTemporary
	case errors.As(err, &ope) && ope.Op == "dial":
		return true
	case errors.As(err, &ne):
		return ne.Timeout()
	}
	return false
}

// resendable reports whether req may be sent again after a transient
// failure: its body can be replayed (none, or GetBody), and its method is
// idempotent (RFC 9110 §9.2.2) or it carries an idempotency key.
func resendable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	return idempotent(req)
}

// idempotent reports whether req's method is idempotent (RFC 9110
// §9.2.2) or req carries an idempotency key: an Idempotency-Key or
// X-Idempotency-Key entry in its Header, whatever its value, as net/http's
// Transport judges it (a nil one marks the request so without sending
// the field).
func idempotent(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// transient ends the attempt g granted, a transient failure (err from
// Base; or resp, a 502 or 504, whose outcome is out), and decides whether
// req goes again. It reports true when it may go again, and writes to ask
// the wait before it, counted from the failure (now): the next attempt
// waits it out with the budget's hold, within MaxWait counted from now
// too, as a refusal's retry does. It reports false when the failure goes
// back to the caller as it is. A 502 or 504 to retry is drained and
// closed first.
func (t *Transport) transient(req *http.Request, b *Budget, key budgetKey, g *lease, now time.Time, attempt, attempts int, bo *retryBackoff, resp *http.Response, out *control.Outcome, err error, ask *control.Ask) bool {
	out.Transient = true
	r := &out.Refusal
	r.Backoff = bo.within(req.Context(), now, bo.next())
	if resp != nil {
		r.Wait, r.Given = retryAfter(resp.Header, now, serverNow(g, now), g.granted(), t.reader(&key, g))
	}
	r.Retryable = attempt < attempts && resendable(req) && req.Context().Err() == nil
	if out.Rand == 0 {
		out.Rand = rand.Uint64() // the spread of an outage's pause (see control.State.transient)
	}
	r.MaxWait = t.maxWait()
	r.Deadline, _ = req.Context().Deadline()
	r.Held = t.localNext(req, &key)
	// A 502 or 504 whose body is still arriving keeps its request in
	// flight, whether it goes back to the caller (until its body ends) or
	// is retried (until it is drained).
	keep := resp != nil && !endsWithHeaders(req, resp)
	out.Keep = keep
	plan := t.finish(req, b, key, g, now, out)

	e := Event{Time: now, Key: b.display(key), Request: req, Attempt: attempt, Wait: plan.Wait, Reason: ReasonTransient}
	if resp != nil {
		e.Status = resp.StatusCode
	}
	if err != nil && t.observed() {
		e.Err = eventError(err, req, key)
	}
	if !plan.Retry {
		if plan.Denied != control.ReasonNone {
			e.Reason = reasonOf(plan.Denied)
		}
		e.Wait = 0 // a give-up reports the wait the server asked for, if any
		if r.Given {
			e.Wait = r.Wait
		}
		e.Kind = EventGiveUp
		t.emitIf(e)
		if keep {
			t.stream(req, b, &key, g, now, resp, attempt)
		}
		return false
	}
	e.Kind = EventRetry
	t.emitIf(e)
	// The wait runs from the failure, the drain included.
	if plan.Wait > 0 {
		ask.After, ask.AfterReason, ask.Probed = now.Add(plan.Wait), plan.Reason, 0
	}
	switch {
	case keep:
		t.drainKept(req, b, key, g, resp.Body)
	case resp != nil:
		discard(req.Context(), resp.Body)
	}
	return true
}

// drainKept discards body, the answer to req, which keeps req in flight
// until it is drained, and ends req then. Should its Read panic (or call
// runtime.Goexit), req is ended as the panic goes on: the key's slot was
// otherwise held until its lease expired (Budget.Lease).
func (t *Transport) drainKept(req *http.Request, b *Budget, key budgetKey, g *lease, body io.ReadCloser) {
	defer func() { t.end(req, b, key, g, g.now()) }()
	discard(req.Context(), body)
}
