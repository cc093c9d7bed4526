package control

import (
	"testing"
	"time"
)

// TestRetryHoldsItsPlace checks, at fixed instants, that a retry waiting
// for the tokens its refusal said it lacked holds its place in line from
// its first attempt: a request that costs and first asked after that
// attempt, held by the same pause, does not go before it when the pause
// ends (it took the tokens the retry waited for: with small requests from
// several workers, a large request was refused again at every attempt
// until it failed); one that costs nothing does; and the claim ends when
// the retry is granted.
func TestRetryHoldsItsPlace(t *testing.T) {
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	first := at(5 * time.Millisecond)
	// setup returns a key whose large request (800 tokens), first sent at
	// 5ms, was refused at 10ms with 900 left (the server counted more):
	// the key pauses until after, when the retry may go.
	setup := func(t *testing.T) (s *State, cfg *Config, retry func(time.Time, bool, *Lease) (Hold, bool), after time.Time) {
		s, cfg = new(State), new(Config)
		var p Lease
		p.SetCost(Cost{Tokens: 1})
		s.Acquire(t0, cfg, Ask{}, &p)
		// 1000 of 60000 left, whole in 59 s: 1000 a second.
		s.Release(t0, cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: openAIQuotas(499, 1000, 59*time.Second)})
		var x Lease
		x.SetCost(Cost{Tokens: 800})
		if _, ok := s.Acquire(first, cfg, Ask{Turns: true}, &x); !ok {
			t.Fatal("800 of 1000 left: not granted")
		}
		plan := s.Release(at(10*time.Millisecond), cfg, &x, &Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
			Quotas: openAIQuotas(499, 900, 59*time.Second), Refusal: Refusal{Retryable: true, MaxWait: time.Minute}})
		if !plan.Retry || plan.Reason != ReasonQuota || plan.Wait < 690*time.Millisecond || plan.Wait > 710*time.Millisecond {
			t.Fatalf("plan %+v; want a retry after about 700ms (as if it cost 1600), for its quota", plan)
		}
		after = at(10 * time.Millisecond).Add(plan.Wait)
		retry = func(now time.Time, again bool, l *Lease) (Hold, bool) {
			l.SetCost(Cost{Tokens: 800})
			ask := Ask{Turns: true, First: first, After: after, AfterReason: plan.Reason}
			if again {
				ask.Since, ask.Claimed = first, true // its first ask claimed (see below)
			}
			return s.Acquire(now, cfg, ask, l)
		}
		if h, ok := retry(at(10*time.Millisecond), false, new(Lease)); ok || !h.Until().Equal(after) || !h.Claimed() {
			t.Fatalf("the retry: granted %v, held until %v, claimed %v; want held until %v, claimed", ok, h.Until(), h.Claimed(), after)
		}
		return s, cfg, retry, after
	}
	other := func(s *State, cfg *Config, now time.Time, c Cost, since time.Time) (Hold, bool) {
		var l Lease
		l.SetCost(c)
		return s.Acquire(now, cfg, Ask{Turns: true, Since: since, Claimed: !since.IsZero()}, &l) // held to an instant first: claimed
	}
	asked := at(20 * time.Millisecond) // after the retry's first attempt

	t.Run("costs", func(t *testing.T) {
		s, cfg, retry, after := setup(t)
		if _, ok := other(s, cfg, asked, Cost{Tokens: 40}, time.Time{}); ok {
			t.Fatal("40 tokens granted while the key paused")
		}
		h, ok := other(s, cfg, after, Cost{Tokens: 40}, asked)
		if ok || h.Reason != ReasonQuota || !h.Until().Equal(after.Add(time.Duration(turnGrace))) {
			t.Errorf("40 tokens, first asked after the retry's first attempt, at the pause's end: granted %v, held %v until %v; want held behind the retry until %v",
				ok, h.Reason, h.Until(), after.Add(time.Duration(turnGrace)))
		}
		var l Lease
		if _, ok := retry(after, true, &l); !ok {
			t.Fatal("the retry was not granted when its wait ended")
		}
		if len(s.turns.c) != 1 || s.turns.c[0].since != instant(asked) || s.turns.c[0].n != 1 {
			t.Errorf("claims %+v; want the retry's ended, the 40 tokens' left", s.turns.c)
		}
		s.Release(after.Add(500*time.Millisecond), cfg, &l, &Outcome{Bytes: -1, Quotas: openAIQuotas(498, 700, 59*time.Second)})
		if _, ok := other(s, cfg, after.Add(500*time.Millisecond), Cost{Tokens: 40}, asked); !ok {
			t.Error("40 tokens held once the retry was answered")
		}
	})
	t.Run("held for its cost", func(t *testing.T) {
		// Once its wait ended, the retry held for its cost (the answer
		// to a request older than it left 100) keeps its place: a
		// request of 40 tokens, which has room, does not go past it.
		s, cfg, retry, after := setup(t)
		var o Lease
		o.SetCost(Cost{Tokens: 40})
		if _, ok := s.Acquire(after, cfg, Ask{Turns: true, Since: at(time.Millisecond)}, &o); !ok {
			t.Fatal("a request of 40 tokens first asked before the retry: not granted at the pause's end")
		}
		s.Release(after, cfg, &o, &Outcome{Bytes: -1, Quotas: openAIQuotas(498, 100, 59*time.Second)})
		later := after.Add(time.Duration(turnGrace) + 10*time.Millisecond)
		if h, ok := retry(later, true, new(Lease)); ok || h.Reason != ReasonQuota {
			t.Fatalf("the retry, 110 left: granted %v, held %v; want held for its cost", ok, h.Reason)
		}
		if _, ok := other(s, cfg, later, Cost{Tokens: 40}, time.Time{}); ok {
			t.Error("40 tokens went past the retry held for its cost")
		}
	})
	t.Run("free", func(t *testing.T) {
		s, cfg, _, after := setup(t)
		other(s, cfg, asked, Cost{}, time.Time{})
		if _, ok := other(s, cfg, after, Cost{}, asked); !ok {
			t.Error("a request that costs nothing was held behind the retry")
		}
	})
}
