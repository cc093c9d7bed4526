package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A request that finds the room a quota states taken by requests in
// flight is held until the reset, and Pending: their answers may show the
// room left (a server counts a request as it arrives). A quota its own
// answer states spent is held until the reset, and not Pending.
func TestHoldPendingOnRequestsInFlight(t *testing.T) {
	day := []parse.Quota{{Limit: 5000, Remaining: 2, Reset: 3 * time.Hour}}
	d := &hostile{t: t}
	l, _, _ := d.acq(0, Ask{}, Cost{})
	d.rel(10*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Quotas: day})
	// Two left: two go, the third finds them in flight.
	for i := range 2 {
		if _, h, ok := d.acq(20*time.Millisecond, Ask{}, Cost{}); !ok {
			t.Fatalf("request %d of the 2 left held: %+v", i, h)
		}
	}
	_, h, ok := d.acq(20*time.Millisecond, Ask{}, Cost{})
	if ok {
		t.Fatal("a third request went while the 2 left were in flight")
	}
	if want := ht0.Add(10*time.Millisecond + 3*time.Hour); !h.Until().Equal(want) || h.Reason != ReasonQuota || !h.Pending() {
		t.Errorf("held %v until %v, pending %v; want quota, until %v, pending", h.Reason, h.Until(), h.Pending(), want)
	}

	// Spent by its own answer, nothing in flight: not pending.
	d = &hostile{t: t}
	l, _, _ = d.acq(0, Ask{}, Cost{})
	spent := []parse.Quota{{Limit: 5000, Remaining: 0, Reset: 3 * time.Hour}}
	d.rel(10*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Quotas: spent})
	if _, h, ok := d.acq(20*time.Millisecond, Ask{}, Cost{}); ok || h.Pending() {
		t.Errorf("a spent quota: granted %v, held %+v; want held, not pending", ok, h)
	}
}
