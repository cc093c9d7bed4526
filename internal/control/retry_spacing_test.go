package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// One flight of 100 requests refused together (Retry-After: 1s) counts
// once toward the outage, so no retry is dropped: the budget spaces them
// out at its rate, two a second, each waiting until what it owes is
// repaid. With the debt clamped at 20 (baf34ad), every retry past the
// 21st was planned at the 21st's wait: 100 within 10.5 s.
func TestOneFlightRetriesStaySpacedOut(t *testing.T) {
	s := &State{}
	cfg := &Config{}
	now := t0
	hint := func(r int64) Outcome {
		return Outcome{First: true, Bytes: -1, Quotas: []parse.Quota{{Policy: "default", Unit: "requests", Limit: 1000, Window: time.Minute, Remaining: r, Reset: time.Minute}}}
	}
	var p Lease
	if _, ok := s.Acquire(now, cfg, Ask{}, &p); !ok {
		t.Fatal("probe held")
	}
	s.Release(now, cfg, &p, ptr(hint(999)))
	for i := range 60 { // answers widen the ramp
		var l Lease
		if _, ok := s.Acquire(now, cfg, Ask{}, &l); !ok {
			t.Fatalf("warm-up %d held", i)
		}
		s.Release(now, cfg, &l, ptr(hint(998-int64(i))))
	}
	const n = 100
	ls := make([]Lease, n)
	for i := range ls {
		if _, ok := s.Acquire(now, cfg, Ask{}, &ls[i]); !ok {
			t.Fatalf("request %d of the flight held", i)
		}
	}
	var waits []time.Duration
	for i := range ls {
		out := Outcome{First: true, Bytes: -1, Refused: true, Refusal: Refusal{Wait: time.Second, Given: true, Reason: ReasonRetryAfter, Retryable: true, MaxWait: 10 * time.Minute}}
		plan := s.Release(now, cfg, &ls[i], &out)
		if plan.Retry {
			waits = append(waits, plan.Wait)
		}
	}
	within := 0
	for _, w := range waits {
		if w <= 10500*time.Millisecond {
			within++
		}
	}
	t.Logf("%d retries planned; the 21st waits %v, the last %v", len(waits), waits[20], waits[len(waits)-1])
	// The budget: about 20 owed plus 2 a second, and a fifth of the
	// first attempts: at most ~45 retries by 10.5s.
	if within > 45 {
		t.Errorf("%d retries planned within 10.5s of one refused flight; the retry budget (2/s, 20 owed) allows about 41", within)
	}
}

func ptr[T any](v T) *T { return &v }
