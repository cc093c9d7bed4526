package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// TestClockStepBackHoldsNoLongerThanMaxPause: a key paused for an hour (a
// Retry-After, or a quota spent until its reset) at T, then the wall clock
// steps back two days (an NTP correction; instants are wall-clock Unix
// nanoseconds). The next Acquire held until T+1h: 49 hours from its own
// now, twice MaxPause, which "is the longest a key pauses on one answer"
// (DESIGN.md §5). A Budget over a Store cut the same state to MaxPause
// (State.Bound); in memory it was not, so the same events held the key
// differently by store.
func TestClockStepBackHoldsNoLongerThanMaxPause(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		out  Outcome
	}{
		{"retry-after", Outcome{First: true, Bytes: -1, Refused: true,
			Refusal: Refusal{Wait: time.Hour, Given: true, Reason: ReasonRetryAfter, MaxWait: 2 * time.Hour, Retryable: true}}},
		{"quota-spent", Outcome{First: true, Bytes: -1, Served: true,
			Quotas: []parse.Quota{{Policy: "p", Unit: "requests", Limit: 10, Window: time.Hour, Remaining: 0, Reset: time.Hour, Dialect: "ietf"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s State
			var cfg Config
			var l Lease
			if _, ok := s.Acquire(t0, &cfg, Ask{}, &l); !ok {
				t.Fatal("first request held")
			}
			s.Release(t0, &cfg, &l, &Outcome{First: true, Bytes: -1, Served: true})
			at := t0.Add(time.Second)
			l = Lease{}
			if _, ok := s.Acquire(at, &cfg, Ask{}, &l); !ok {
				t.Fatal("second request held")
			}
			out := c.out
			s.Release(at, &cfg, &l, &out)

			back := t0.Add(-48 * time.Hour) // the clock steps back two days
			l = Lease{}
			h, ok := s.Acquire(back, &cfg, Ask{}, &l)
			if ok {
				return
			}
			hold := h.Until().Sub(back)
			if hold > MaxPause {
				t.Errorf("after the clock stepped back 48h: held %v (until %v), want at most MaxPause %v", hold, h.Until(), MaxPause)
			}
			// The same state through the Store path is cut to MaxPause.
			var st State
			b, _ := s.MarshalBinary()
			if err := st.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			st.Bound(back, &cfg)
			l = Lease{}
			if h2, ok2 := st.Acquire(back, &cfg, Ask{}, &l); ok2 != ok || h2.Until() != h.Until() {
				t.Errorf("in memory: held until %v; through a Store (Bound): granted %v, held until %v", h.Until(), ok2, h2.Until())
			}
		})
	}
}
