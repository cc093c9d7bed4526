package polite

import (
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// A wall clock stepped back two days (an NTP correction) after a start
// under a per-key pace of one request a second. The Budget's MaxRate, kept
// by the controller, was bounded from the new clock; the Transport's own
// MaxRate and a robots.txt Crawl-delay (the floor), kept by
// ceilings.reserve in wall-clock nanoseconds, held the next start 48h0m1s,
// past MaxPause: with the default MaxWait every request to the key failed
// at once with a WaitError until the clock caught up. The next start now
// moves back with the clock, what was left of its spacing kept.
func TestLocalPaceAfterClockStepBack(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	back := t0.Add(-48 * time.Hour)

	// The Budget's ceiling, for comparison.
	var s control.State
	cfg := control.Config{MaxRate: 1}
	var l control.Lease
	if _, ok := s.Acquire(t0, &cfg, control.Ask{}, &l); !ok {
		t.Fatal("first Acquire held")
	}
	s.Release(t0.Add(10*time.Millisecond), &cfg, &l, &control.Outcome{First: true, Bytes: -1})
	budgetWait := time.Duration(0)
	if h, ok := s.Acquire(back, &cfg, control.Ask{}, new(control.Lease)); !ok {
		budgetWait = h.Until().Sub(back)
	}
	t.Logf("Budget.MaxRate 1 after a step back of 48h: next start held %v", budgetWait)

	for _, tc := range []struct {
		name    string
		maxRate float64
		floor   time.Duration
	}{
		{"Transport.MaxRate 1", 1, 0},
		{"Crawl-delay 1s", 0, time.Second},
	} {
		var c ceilings
		k := originKey("https", "api.test").m
		var tk uint64
		if _, _, ok := c.reserve(k, t0, tc.maxRate, 0, nil, tc.floor, &tk, time.Time{}, 0, 0); !ok {
			t.Fatalf("%s: first reserve held", tc.name)
		}
		tk = 0
		_, ch, ok := c.reserve(k, back, tc.maxRate, 0, nil, tc.floor, &tk, time.Time{}, 0, 0)
		if ok {
			continue
		}
		if d := ch.until.Sub(back); d > time.Second {
			t.Errorf("%s: after the wall clock stepped back 48h the next start is held %v (until %v), beyond MaxPause (%v); want one spacing at most (1s), as Budget.MaxRate gives (%v)",
				tc.name, d, ch.until, control.MaxPause, budgetWait)
		}
	}
}
