package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A key under two quotas stated on every answer (draft-11 RateLimit
// items): "a", a true sliding-window counter of 10 per 60s, and "b", a
// fixed window of 5 per 1s that another client shares. After a's answer
// said r=0, three requests its pace sent before a's stated reset were
// refused, each refusal stating a with quota left (r=1) and b spent
// (r=0): b refused them, not a (draft-11 §4.1: an item's r counts against
// its own policy). Each counted toward a's refutation all the same, and
// the third refuted a's mark, though a never refused a request while it
// said it had quota left.
func TestRefuteCountsItsPolicysRefusalsOnly(t *testing.T) {
	var s State
	cfg := Config{}
	qs := func(ra int64, resetA time.Duration, rb int64) []parse.Quota {
		return []parse.Quota{
			{Policy: "a", Dialect: "ietf", Limit: 10, Window: 60 * time.Second, Remaining: ra, Reset: resetA},
			{Policy: "b", Dialect: "ietf", Limit: 5, Window: time.Second, Remaining: rb, Reset: 100 * ms},
		}
	}
	now := time.Duration(0)
	next := func() Lease {
		t.Helper()
		for lim := now + 30*time.Second; now < lim; now += 10 * ms {
			var l Lease
			if _, ok := s.Acquire(rAt(now), &cfg, Ask{}, &l); ok {
				return l
			}
		}
		t.Fatalf("held until %v", now)
		return Lease{}
	}
	rel := func(l *Lease, refused bool, q []parse.Quota) {
		now += 50 * ms
		out := &Outcome{First: true, Bytes: -1, Quotas: q, Refused: refused, Rejected: refused, Served: !refused}
		s.Release(rAt(now), &cfg, l, out)
	}
	pa := func() *policy { return s.find("a", nil, unitRequests) }
	// The probe: a spent, to 60s.
	l := next()
	rel(&l, false, qs(0, 60*time.Second-50*ms, 4))
	// The probe at a's reset, accepted with 3 of 10 left: a counter's mark.
	now = 60 * time.Second
	l = next()
	rel(&l, false, qs(3, 60*time.Second-50*ms, 4))
	if !pa().sliding {
		t.Fatalf("a not marked a counter after its probe was accepted with 3 left")
	}
	end := 120 * time.Second
	for _, r := range []int64{2, 1, 0} {
		l = next()
		rel(&l, false, qs(r, end-now-50*ms, 4))
	}
	for i := range 3 {
		// a said r=0: its pace sends the next, refused by b; a states 1 left.
		l = next()
		if now >= end {
			t.Fatalf("past a's reset at step %d", i)
		}
		rel(&l, true, qs(1, end-now-50*ms, 0))
		t.Logf("refusal %d at %v: a sliding=%v fixed=%v foreseen=%d", i+1, now, pa().sliding, pa().fixed, pa().foreseen)
		if i == 2 {
			break
		}
		// Accepted, a spent again.
		l = next()
		rel(&l, false, qs(0, end-now-50*ms, 4))
	}
	if p := pa(); !p.sliding {
		t.Errorf("a's mark refuted (sliding=%v fixed=%v) by three refusals that each stated a with 1 left and b spent: b's refusals, not a's", p.sliding, p.fixed)
	}
}
