package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// Refusals that give a wait of zero (a reset already past, Retry-After: 0)
// double the refusal floor with each in a row, at the end of a window too
// once a flight was refused since its acceptances: after one acceptance,
// the floor stayed a second for every refusal after it (the cycle, which
// no pause renewed, kept that acceptance), and a server refusing every
// request so got one a second. The refusals of the window's own flight
// still wait the floor alone (see "the refusals of a flight count once").
func TestZeroWaitsDoubleAfterAWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var s State
	var cfg Config
	var l Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &l); !ok {
		t.Fatal("the first request was not granted")
	}
	// RateLimit: "x";r=0;t=0 on an acceptance, then on every refusal.
	spent := []parse.Quota{{Policy: "x", Unit: "requests", Limit: -1, Remaining: 0, Reset: 0, Dialect: "ietf"}}
	s.Release(t0, &cfg, &l, &Outcome{First: true, Bytes: -1, Quotas: spent})
	zero := Outcome{First: true, Bytes: -1, Refused: true, Rejected: true, Quotas: spent,
		Refusal: Refusal{Given: true, Reason: ReasonQuota, Retryable: true, MaxWait: 10 * time.Minute}}
	now := t0.Add(time.Second)
	var waits []time.Duration
	for range 5 {
		var l Lease
		h, ok := s.Acquire(now, &cfg, Ask{}, &l)
		if !ok {
			now = h.Until()
			if _, ok = s.Acquire(now, &cfg, Ask{}, &l); !ok {
				t.Fatalf("held at %v past the pause", now.Sub(t0))
			}
		}
		p := s.Release(now.Add(10*time.Millisecond), &cfg, &l, &zero)
		waits = append(waits, p.Wait)
		now = now.Add(10 * time.Millisecond).Add(p.Wait)
	}
	t.Logf("waits: %v", waits)
	for i := 1; i < len(waits); i++ {
		if waits[i] < waits[i-1]*5/4 {
			t.Fatalf("waits of refusals in a row, each of a quota spent and reset now, after an acceptance: %v; want each longer than the last by a quarter at least", waits)
		}
	}
}
