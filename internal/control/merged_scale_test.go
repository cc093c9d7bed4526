package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// Past 64 reservations of a unit the two oldest merge (DESIGN.md §10,
// "Reservations merged"), and a request whose reservation was merged
// freed, when it ended, what its cost needs at the current scale: after
// the scale rose, more than it reserved, another's reservation with it.
// Here 66 requests of 1000 input tokens are in flight at scale 0; the
// refusal of the first raises the scale (2250 needed); the second ends
// unanswered, and freed 2000, its own 1000 and the third's.
func TestMergedUnreserveAtRisenScale(t *testing.T) {
	var s State
	cfg := Config{}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	full := []parse.Quota{{Unit: "tokens", Limit: 1000000, Remaining: 1000000, Reset: 0, Dialect: "openai"}}
	// Ramp up, as TestMergedReservationRoundTrip does: the probe, then
	// rounds of 4, 12, 36, ... (small requests, answered).
	for range 4 {
		var ls []*Lease
		for {
			l := new(Lease)
			l.SetCost(Cost{InputTokens: 1})
			if _, ok := s.Acquire(now, &cfg, Ask{}, l); !ok {
				break
			}
			ls = append(ls, l)
		}
		now = now.Add(10 * time.Millisecond)
		for _, l := range ls {
			s.Release(now, &cfg, l, &Outcome{First: true, Bytes: -1, Quotas: full})
		}
		now = now.Add(10 * time.Millisecond)
	}
	leases := make([]Lease, 66)
	for i := range leases {
		leases[i].SetCost(Cost{InputTokens: 1000})
		if _, ok := s.Acquire(now, &cfg, Ask{}, &leases[i]); !ok {
			t.Fatalf("lease %d not granted", i)
		}
	}
	u := &s.costs.units[0]
	if u.n != 66000 || len(u.res) != maxReservations {
		t.Fatalf("reserved %d in %d reservations, want 66000 in %d", u.n, len(u.res), maxReservations)
	}
	// The first is refused with 1999 tokens left: the server counted
	// more than its 1000.
	refused := []parse.Quota{{Unit: "tokens", Limit: 1000000, Remaining: 1999, Reset: 0, Dialect: "openai"}}
	s.Release(now.Add(time.Second), &cfg, &leases[0], &Outcome{First: true, Bytes: -1, Refused: true, Quotas: refused,
		Refusal: Refusal{Wait: time.Second, Given: true, Reason: ReasonRetryAfter, MaxWait: time.Minute}})
	t.Logf("scale after the refusal: %d; reserved %d in %d reservations", u.scale, u.n, len(u.res))
	// The second ends unanswered (its connection reset, say).
	s.Release(now.Add(2*time.Second), &cfg, &leases[1], &Outcome{First: true, Bytes: -1, Failed: true})
	// 64 requests (leases[2:]) are still in flight, each having reserved
	// 1000: none of that may be freed by another's end.
	if u.n < 64000 {
		t.Errorf("after the second ended, %d tokens reserved for the 64 requests still in flight, which reserved 64000: the end of one freed another's reservation", u.n)
	}
}
