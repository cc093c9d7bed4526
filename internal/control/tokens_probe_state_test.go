package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// The probe of a tokens quota refilled at a rate not known, through
// Acquire and Release: 100 tokens left, whole again in 10 s, no limit
// stated (OpenAI's remaining and reset alone), the answer read a second
// after its request: the key's probe wait is four such round trips, 4 s.
func TestCostProbeThroughState(t *testing.T) {
	unstated := []parse.Quota{{Policy: "tok", Unit: "tokens", Limit: -1, Remaining: 100, Reset: 10 * time.Second, Dialect: "openai"}}
	cfg := &Config{}
	acquire := func(s *State, at time.Duration, tokens int64) (*Lease, Hold, bool) {
		l := new(Lease)
		l.SetCost(Cost{Tokens: tokens})
		h, ok := s.Acquire(t0.Add(at), cfg, Ask{}, l)
		return l, h, ok
	}
	observed := func(quotas []parse.Quota) *State {
		s := new(State)
		l, _, _ := acquire(s, 0, 50)
		s.Release(t0.Add(time.Second), cfg, l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: quotas})
		return s
	}
	sec := time.Second

	t.Run("the next waits for the probe", func(t *testing.T) {
		s := observed(unstated)
		if _, _, ok := acquire(s, 20*sec, 500); !ok {
			t.Fatal("the probe, past the reset, was held")
		}
		// The probe's wait: 4 round trips of 1 s.
		if _, h, ok := acquire(s, 21*sec, 500); ok || !h.Wake().Equal(t0.Add(24*sec)) {
			t.Errorf("a request of 500 beside the probe: granted %v, looks again %v; want held until +24s", ok, h.Wake().Sub(t0))
		}
		if _, _, ok := acquire(s, 24*sec, 500); !ok {
			t.Errorf("the probe unanswered for its wait: the next was held")
		}
	})

	for _, out := range []struct {
		name string
		out  Outcome
	}{
		{"failed", Outcome{Failed: true}},
		{"answered without it", Outcome{First: true, Served: true, Bytes: -1}},
	} {
		t.Run("the probe "+out.name, func(t *testing.T) {
			// Nothing in flight, nothing to wait for: the next probes.
			s := observed(unstated)
			p, _, ok := acquire(s, 20*sec, 500)
			if !ok {
				t.Fatal("the probe was held")
			}
			s.Release(t0.Add(20*sec+100*time.Millisecond), cfg, p, &out.out)
			if _, h, ok := acquire(s, 20*sec+200*time.Millisecond, 500); !ok {
				t.Errorf("held until %v, nothing in flight", h.Until().Sub(t0))
			}
		})
	}

	t.Run("the limit, with what is in flight", func(t *testing.T) {
		// At its limit (999 of 1000, whole in 60 ms): no rate. Three
		// requests of 300 granted since (the first its probe) reserve
		// 900 of it; a fourth never fits beside them, past the probe's
		// wait too.
		s := observed([]parse.Quota{{Policy: "tok", Unit: "tokens", Limit: 1000, Remaining: 999, Reset: 60 * time.Millisecond, Dialect: "openai"}})
		for i := range 3 {
			if _, _, ok := acquire(s, 2*sec+time.Duration(i)*time.Millisecond, 300); !ok {
				t.Fatalf("request %d of 300 held", i+1)
			}
		}
		if _, _, ok := acquire(s, 7*sec, 300); ok {
			t.Errorf("a request of 300 went with 900 of a limit of 1000 reserved")
		}
	})

	t.Run("the probe's wait within MaxPause", func(t *testing.T) {
		// A state read from a Store, its round trip 10 hours: the
		// probe's wait is MaxPause at most.
		s := observed(unstated)
		s.ramp.rtt = int64(10 * time.Hour)
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var d State
		if err := d.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		d.Bound(t0.Add(20*sec), cfg)
		if _, _, ok := acquire(&d, 20*sec, 500); !ok {
			t.Fatal("the probe was held")
		}
		if next := time.Duration(d.costs.quotas[0].deadline - instant(t0.Add(20*sec))); next > MaxPause {
			t.Errorf("the next may probe %v after the probe: past MaxPause", next)
		}
	})

	t.Run("an observation older than MaxPause", func(t *testing.T) {
		// Its probe's wait ends within MaxPause of the probe, not of the
		// observation: Bound keeps it, and no second probe goes beside.
		s := observed(unstated)
		at := MaxPause + sec
		if _, _, ok := acquire(s, at, 500); !ok {
			t.Fatal("the probe was held")
		}
		s.Bound(t0.Add(at+time.Millisecond), cfg)
		if _, _, ok := acquire(s, at+time.Millisecond, 500); ok {
			t.Errorf("a second probe went beside the first")
		}
	})
}
