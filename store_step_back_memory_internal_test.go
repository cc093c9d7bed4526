package polite

import (
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// A Budget with no Store keeps MaxRate's spacing across a step back of
// this process's clock as before: one spacing from the new now. Only a
// Store's state, which other processes write with clocks of their own,
// keeps a next start up to skewMax ahead (see control.Ask.Shared): applied
// to every state, a step back of 5 s held the next request 5.9 s under
// MaxRate 1.
func TestMemoryStepBackHoldsOneSpacing(t *testing.T) {
	b := &Budget{MaxRate: 1}
	b.init()
	k := originKey("http", "api.test")
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var g lease
	if _, ok, _, _ := b.acquire(t.Context(), k, t0, control.Ask{}, &g); !ok {
		t.Fatal("first request held")
	}
	b.release(t.Context(), k, &g, t0.Add(50*time.Millisecond), &control.Outcome{First: true, Bytes: -1, Served: true})
	now := t0.Add(100 * time.Millisecond).Add(-5 * time.Second) // stepped back 5 s
	var g2 lease
	h, ok, _, _ := b.acquire(t.Context(), k, now, control.Ask{}, &g2)
	if ok {
		return
	}
	if held := h.Until().Sub(now); held > time.Second {
		t.Errorf("after a 5 s step back of this process's clock, MaxRate 1 holds the next request %v (want at most one spacing, 1s)", held)
	}
}
