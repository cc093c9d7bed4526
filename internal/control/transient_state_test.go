package control

import (
	"testing"
	"time"
)

var (
	okOut      = Outcome{First: true, Bytes: -1}
	refusedOut = Outcome{First: true, Bytes: -1, Refused: true,
		Refusal: Refusal{Backoff: time.Second, Retryable: true, MaxWait: 10 * time.Minute}}
	// A 502 the Transport retries (RetryTransient): a gateway's failure.
	gateway502 = Outcome{First: true, Bytes: -1, Transient: true,
		Refusal: Refusal{Backoff: time.Second, Retryable: true, MaxWait: 10 * time.Minute}}
)

// DESIGN.md §7: a transient failure (502, 504) retried through
// DecideTransient "says nothing of the origin's rate limit": the key does
// not pause and nothing is learned (transient.go: "nothing else
// changes"). A 502 that answers the probe of a measurement does not end
// the measurement: it did, and set a learned quota from it.
func TestTransient502KeepsMeasuring(t *testing.T) {
	d := &hostile{t: t}
	now := time.Duration(0)
	// The probe, then 5 accepted.
	l := mustGrant(d, now)
	d.rel(now+10*time.Millisecond, &l, okOut)
	now = 100 * time.Millisecond
	for i := 0; i < 5; i++ {
		l := mustGrant(d, now)
		d.rel(now+10*time.Millisecond, &l, okOut)
		now += 20 * time.Millisecond
	}
	// A refusal the headers did not foresee: a measurement starts.
	l = mustGrant(d, now)
	d.rel(now+10*time.Millisecond, &l, refusedOut)
	if !d.s.learn.pending {
		t.Fatalf("no measurement pending after the refusal")
	}
	// After the pause, the probe meets a gateway's 502.
	now = 2 * time.Second
	l, h, ok := d.acq(now, Ask{}, Cost{})
	for !ok {
		now = h.Until().Sub(ht0)
		l, h, ok = d.acq(now, Ask{}, Cost{})
	}
	d.rel(now+10*time.Millisecond, &l, gateway502)
	if !d.s.learn.pending || d.s.learn.quota != nil {
		var lq *PolicyView
		if v := d.s.View(ht0.Add(now)); v.Learned != nil {
			lq = v.Learned
		}
		t.Fatalf("a retried 502 ended the learner's measurement: pending=%v learned=%+v (nothing should be learned from a gateway's failure)",
			d.s.learn.pending, lq)
	}
}

// A 502 retried under RetryTransient is not an acceptance: it does not
// end the refusals in a row (the streak of zero waits that doubles the
// refusal floor for Retry-After: 0, and the run that makes an outage). It
// reset both before: Retry-After: 0 between 502s waited 1s every time.
func TestTransient502KeepsTheRun(t *testing.T) {
	d := &hostile{t: t}
	now := time.Duration(0)
	zero := Outcome{First: true, Bytes: -1, Refused: true,
		Refusal: Refusal{Wait: 0, Given: true, Reason: ReasonRetryAfter, Retryable: true, MaxWait: 10 * time.Minute}}
	var waits []time.Duration
	for i := 0; i < 6; i++ {
		l, h, ok := d.acq(now, Ask{}, Cost{})
		for !ok {
			now = h.Until().Sub(ht0)
			if h.Until().IsZero() {
				now = h.Wake().Sub(ht0)
			}
			l, h, ok = d.acq(now, Ask{}, Cost{})
		}
		if i%2 == 1 {
			d.rel(now+10*time.Millisecond, &l, gateway502)
			now += 20 * time.Millisecond
			continue
		}
		p := d.rel(now+10*time.Millisecond, &l, zero)
		waits = append(waits, p.Wait)
		now += 10 * time.Millisecond
	}
	t.Logf("waits of Retry-After: 0 refusals with 502s between: %v; streak %d run %d", waits, d.s.retry.streak, d.s.retry.run)
	if d.s.retry.run < 3 {
		t.Fatalf("three refusals and no acceptance, but the run of refusals is %d: the 502s counted as acceptances", d.s.retry.run)
	}
}

// mustGrant grants a request at at, or fails.
func mustGrant(d *hostile, at time.Duration) Lease {
	d.t.Helper()
	l, h, ok := d.acq(at, Ask{}, Cost{})
	if !ok {
		d.t.Fatalf("held at %v: %+v until %v", at, h, h.Until().Sub(ht0))
	}
	return l
}
