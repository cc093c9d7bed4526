package control_test

import (
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// A pause read from a Store is cut to MaxPause from now, whatever the
// Lease (DESIGN.md §3, "The binary form"; §5). Bound compared it with the
// longest hold, which is the Lease and a slot when Lease is above 22h: with
// a Lease of 48h, a pause written by a process whose clock was 10h ahead
// held the key 34h.
func TestBoundCapsPauseWithLongLease(t *testing.T) {
	ahead := t0.Add(10 * time.Hour) // the writer's clock
	for _, lease := range []time.Duration{0, 48 * time.Hour} {
		cfg := &control.Config{Lease: lease}
		var s control.State
		s.PauseUntil(ahead, cfg, ahead.Add(control.MaxPause), control.ReasonRetryAfter)
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got control.State
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		got.Bound(t0, cfg)
		if until, _ := got.Paused(t0); until.After(t0.Add(control.MaxPause)) {
			t.Errorf("Lease %v: after Bound the key is paused for %v, want MaxPause (%v) at most", lease, until.Sub(t0), control.MaxPause)
		}
	}
}

// The fallback of r=0 without t doubles per key, and only an answer with no
// quota spent without t starts it over (DESIGN.md §1.7). An answer whose
// one quota was spent with a reset did not: after three untimed answers and
// a timed one, the next untimed one paused the key 8s instead of 1s.
func TestZeroStreakEndsOnTimedReset(t *testing.T) {
	cfg := &control.Config{}
	var st control.State
	untimed := parse.Quota{Policy: "default", Unit: "requests", Limit: -1, Remaining: 0, Reset: -1}
	timed := untimed
	timed.Reset = 2 * time.Second
	step := func(at time.Duration, q parse.Quota) time.Duration {
		t.Helper()
		now := t0.Add(at)
		var l control.Lease
		if _, ok := st.Acquire(now, cfg, control.Ask{}, &l); !ok {
			t.Fatalf("at %v: held", at)
		}
		st.Release(now, cfg, &l, &control.Outcome{First: true, Quotas: []parse.Quota{q}, Bytes: -1})
		until, _ := st.Paused(now)
		return until.Sub(now)
	}
	step(0, untimed)             // 1s
	step(1*time.Second, untimed) // 2s
	step(3*time.Second, untimed) // 4s
	step(7*time.Second, timed)   // spent until its reset: no quota spent without t
	if got := step(9*time.Second, untimed); got > time.Second+time.Second/10 {
		t.Errorf("r=0 without t after an answer with none paused the key %v, want 1s (the fallback started over)", got)
	}
}

// The fallback starts over at an answer that states quotas, none spent
// without t (DESIGN.md §1.7), such as one whose quota states its limit
// alone; it was reset only while a quota with r was read: after three
// untimed answers and such an answer, the next untimed one paused the key
// 8s instead of 1s. An answer that states none keeps it: a cache may have
// served it, and such an answer changes nothing (§1.5).
func TestZeroStreakEndsOnAnswerWithNoQuotaSpent(t *testing.T) {
	untimed := parse.Quota{Policy: "default", Unit: "requests", Limit: -1, Remaining: 0, Reset: -1}
	limitOnly := parse.Quota{Policy: "default", Unit: "requests", Limit: 100, Remaining: -1, Reset: -1}
	for _, tc := range []struct {
		name   string
		quotas []parse.Quota
		want   time.Duration // the fallback of the next untimed answer
	}{
		{"limit only", []parse.Quota{limitOnly}, time.Second},
		{"no quota", nil, 8 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &control.Config{}
			var st control.State
			step := func(at time.Duration, qs []parse.Quota) time.Duration {
				t.Helper()
				now := t0.Add(at)
				var l control.Lease
				if _, ok := st.Acquire(now, cfg, control.Ask{}, &l); !ok {
					t.Fatalf("at %v: held", at)
				}
				st.Release(now, cfg, &l, &control.Outcome{First: true, Quotas: qs, Bytes: -1})
				until, _ := st.Paused(now)
				return until.Sub(now)
			}
			step(0, []parse.Quota{untimed})             // 1s
			step(1*time.Second, []parse.Quota{untimed}) // 2s
			step(3*time.Second, []parse.Quota{untimed}) // 4s
			step(7*time.Second, tc.quotas)
			if got := step(9*time.Second, []parse.Quota{untimed}); got < tc.want || got > tc.want+tc.want/10 {
				t.Errorf("r=0 without t after an answer with %s paused the key %v, want %v", tc.name, got, tc.want)
			}
		})
	}
}
