package control_test

import (
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// A Retry-After shorter than the t of a spent RateLimit field takes
// precedence over it (draft-11 §7), and the stated reset stays the
// policy's. Cut to the Retry-After, the deadline was read as the stated
// reset (policy.statedEnd): a fixed window of 10 a minute whose refusals
// carry a Retry-After of 5s (the draft's B.3 example has Retry-After: 20
// with t=40, and gateways send a constant one) had the probe sent when
// the Retry-After ended, refused with the window's true reset, taken for
// a probe refused at its reset, the mark of a sliding-window counter: the
// key paced 9 a minute spread over the minute for good, instead of 10 at
// the window's start, and passed over the window's r=0.
func TestRetryAfterCutKeepsStatedReset(t *testing.T) {
	const s, ms = time.Second, time.Millisecond
	var cfg control.Config
	var st control.State
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	acquire := func(d time.Duration, l *control.Lease) (control.Hold, bool) {
		return st.Acquire(at(d), &cfg, control.Ask{}, l)
	}
	var p control.Lease
	if _, ok := acquire(0, &p); !ok {
		t.Fatal("probe held")
	}
	st.Release(at(100*ms), &cfg, &p, raPtr(raOK(raIETF(10, 60*s, 5, 59*s))))
	var a control.Lease
	if _, ok := acquire(1*s, &a); !ok {
		t.Fatal("a held")
	}
	// Another client took the rest of the window: refused, Retry-After 5s.
	st.Release(at(1*s+100*ms), &cfg, &a, raPtr(raRefused(raRetryAfter(5*s), raIETF(10, 60*s, 0, 58*s))))
	var b control.Lease
	if _, ok := acquire(6*s+600*ms, &b); ok {
		// The probe at the Retry-After's end: the window is still spent.
		st.Release(at(6*s+700*ms), &cfg, &b, raPtr(raRefused(raRetryAfter(5*s), raIETF(10, 60*s, 0, 53*s))))
	}
	// The next window: this key alone, the window whole. Its probe is
	// accepted with 9 left, and the key sends its 9 (each answer stating
	// r), the last answered r=0 with 58s to go.
	now := 60*s + 200*ms
	var grants []time.Duration
	for r := int64(9); r >= 0; r-- {
		var l control.Lease
		for {
			h, ok := acquire(now, &l)
			if ok {
				break
			}
			if h.Until().IsZero() || h.Until().Sub(t0) >= 119*s {
				t.Fatalf("the request for r=%d held for %v until %v, granted so far at %v: paced as a sliding-window counter (q-1 per w, one per w/(q-1)), marked at the probe sent when the Retry-After ended", r, h.Reason, h.Until().Sub(t0), grants)
			}
			now = h.Until().Sub(t0)
		}
		grants = append(grants, now)
		st.Release(at(now+100*ms), &cfg, &l, raPtr(raOK(raIETF(10, 60*s, r, 120*s-now-100*ms))))
		now += 200 * ms
	}
	// The quota is spent until 2m: a fixed window's key waits for it.
	var d control.Lease
	h, ok := acquire(now, &d)
	if ok || h.Reason != control.ReasonQuota {
		t.Errorf("after r=0 with %v left of a fixed window, Acquire at %v: granted %v, held for %v until %v; want held for the quota until 2m (the policy was taken for a sliding-window counter at the probe sent when the Retry-After ended)", 120*s-now+100*ms, now, ok, h.Reason, h.Until().Sub(t0))
	}
	if ok || h.Until().IsZero() {
		return
	}
	var e control.Lease
	if when := h.Until().Sub(t0); when < 119*s {
		if _, ok := acquire(when, &e); ok {
			t.Errorf("granted at %v into a window stated spent until 2m", when)
		}
	}
}

func raOK(qs ...parse.Quota) control.Outcome {
	return control.Outcome{First: true, Quotas: qs, Bytes: -1, Served: true}
}

func raRefused(r control.Refusal, qs ...parse.Quota) control.Outcome {
	return control.Outcome{First: true, Quotas: qs, Bytes: -1, Refused: true, Refusal: r}
}

func raRetryAfter(d time.Duration) control.Refusal {
	return control.Refusal{Wait: d, Given: true, Reason: control.ReasonRetryAfter, Retryable: true, MaxWait: 10 * time.Minute}
}

func raIETF(q int64, w time.Duration, r int64, t time.Duration) parse.Quota {
	return parse.Quota{Policy: "default", Unit: "requests", Limit: q, Window: w, Remaining: r, Reset: t, Dialect: "ietf"}
}

func raPtr(o control.Outcome) *control.Outcome { return &o }
