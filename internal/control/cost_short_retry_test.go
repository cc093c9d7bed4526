package control

import (
	"testing"
	"time"
)

// A request refused though a cost quota stated room for it was counted as
// more than estimated: its retry waits for room for twice its cost
// (Ask.Grow), while it reserves only its cost. Its retries were admitted
// at the room for the estimate, refused again at each attempt while other
// requests took what refilled, until MaxAttempts failed it (one task of
// 150, in about one run of 150, with 100 workers against a server counting
// prompts 1.3 times).
func TestShortRefusalRetryWaitsForMoreRoom(t *testing.T) {
	cfg := Config{}
	cost := Cost{Tokens: 500, InputTokens: 400}
	// refused returns a state whose request of cost was refused with
	// 600 tokens stated left of 60,000 a minute (1,000 a second), and
	// the plan of its retry.
	refused := func() (*State, Plan) {
		t.Helper()
		s := new(State)
		l := new(Lease)
		l.SetCost(cost)
		if h, ok := s.Acquire(t0, &cfg, Ask{}, l); !ok {
			t.Fatalf("first request held: %v", h.Reason)
		}
		s.Release(t0, &cfg, l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: openAITokens(60000, 30000, 30*time.Second)})
		now := t0.Add(time.Second)
		l = new(Lease)
		l.SetCost(cost)
		if h, ok := s.Acquire(now, &cfg, Ask{}, l); !ok {
			t.Fatalf("second request held: %v", h.Reason)
		}
		return s, s.Release(now, &cfg, l, &Outcome{First: true, Refused: true, Rejected: true, Bytes: -1,
			Refusal: Refusal{Retryable: true, MaxWait: time.Minute, Backoff: time.Second}, Quotas: openAITokens(60000, 600, 59400*time.Millisecond)})
	}
	s, plan := refused()
	if !plan.Retry || !plan.Short {
		t.Fatalf("plan %+v, want a retry of a request counted short", plan)
	}
	need := s.costs.needIn("tokens", &cost)
	if need <= 600 {
		t.Fatalf("the refusal left the cost held as %d, want above the 600 stated left", need)
	}
	// The first instant, in steps of 10ms from the refusal, a request
	// asking as ask is granted.
	granted := func(ask Ask) time.Duration {
		t.Helper()
		s, _ := refused()
		for d := time.Duration(0); d <= time.Minute; d += 10 * time.Millisecond {
			l := new(Lease)
			l.SetCost(cost)
			if _, ok := s.Acquire(t0.Add(time.Second+d), &cfg, ask, l); ok {
				return d
			}
		}
		t.Fatalf("%+v never granted", ask)
		return 0
	}
	// 1,000 tokens a second refill: room for twice need comes after
	// about 2·need-600 ms. A request asking for room for its cost goes
	// when the key's pause ends, sooner.
	once, twice := granted(Ask{}), granted(Ask{Grow: 1})
	if lo := time.Duration(2*need-600-20) * time.Millisecond; twice < lo {
		t.Errorf("retry counted short granted %v after its refusal, want at least %v (room for twice %d)", twice, lo, need)
	}
	if once >= twice {
		t.Errorf("a request asking room for its cost granted %v after the refusal, want before the retry counted short (%v)", once, twice)
	}
	// Its reservation is its cost, not twice it.
	s, _ = refused()
	l := new(Lease)
	l.SetCost(cost)
	at := t0.Add(time.Second + twice)
	if _, ok := s.Acquire(at, &cfg, Ask{Grow: 1}, l); !ok {
		t.Fatalf("retry held at %v", twice)
	}
	if got := s.costs.units[0].n; got != need {
		t.Errorf("retry reserved %d, want its cost, %d", got, need)
	}
	// Grow stops at four times the cost, and at the whole quota.
	if got, want := granted(Ask{Grow: 200}), granted(Ask{Grow: maxGrow}); got != want {
		t.Errorf("Grow 200 granted after %v, Grow %d after %v", got, maxGrow, want)
	}
}
