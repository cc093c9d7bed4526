package control

import (
	"testing"
	"time"
)

// A retry asks again with its first attempt's instant (Ask.Since), which
// another request that first asked at the same nanosecond (every worker
// of a synctest bubble starts together) may hold a claim of. Counted as
// if it had claimed there, a retry that never claimed (held for its own
// wait, after a refusal not for its quota) counted that other request off
// its claim, when granted or when it gave up, and a younger request went
// before it. Whether a request is counted is what its last Hold said
// (Hold.Claimed, passed back as Ask.Claimed; the Transport leaves only
// then).
func TestRetryCountedOnlyInItsClaim(t *testing.T) {
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	first := at(500 * time.Millisecond) // A and B first ask then
	refused := at(510 * time.Millisecond)
	c := at(600 * time.Millisecond) // C first asks then
	// setup: A is granted at 500ms; B, asking at the same instant, is held
	// while A is in flight. A is refused at 510ms with Retry-After: 2: the
	// key pauses. B asks again, held by the pause: it claims the turn of
	// 500ms. A's retry asks, held for its own wait: it claims nothing. C
	// first asks at 600ms, behind B.
	setup := func(t *testing.T) (s *State, cfg *Config, retry Ask, end time.Time) {
		s, cfg = new(State), new(Config)
		var p Lease
		s.Acquire(t0, cfg, Ask{}, &p)
		s.Release(t0, cfg, &p, &Outcome{First: true, Bytes: -1})
		var a Lease
		if h, ok := s.Acquire(first, cfg, Ask{Turns: true}, &a); !ok {
			t.Fatalf("A held %+v", h)
		}
		hb, ok := s.Acquire(first, cfg, Ask{Turns: true}, new(Lease))
		if ok {
			t.Fatal("B granted beside A in flight")
		}
		plan := s.Release(refused, cfg, &a, &Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
			Refusal: Refusal{Wait: 2 * time.Second, Given: true, Reason: ReasonRetryAfter, Retryable: true, MaxWait: time.Minute}})
		if !plan.Retry || plan.Reason == ReasonQuota {
			t.Fatalf("plan %+v; want a retry, for the Retry-After", plan)
		}
		hb, ok = s.Acquire(refused, cfg, Ask{Turns: true, Since: first, Claimed: hb.Claimed()}, new(Lease))
		if ok || !hb.Claimed() {
			t.Fatalf("B in the pause: granted %v, claimed %v; want held, claimed", ok, hb.Claimed())
		}
		retry = Ask{Turns: true, First: first, After: refused.Add(plan.Wait), AfterReason: plan.Reason}
		h, ok := s.Acquire(refused, cfg, retry, new(Lease))
		if ok || h.Claimed() {
			t.Fatalf("A's retry: granted %v, claimed %v; want held for its own wait, no claim", ok, h.Claimed())
		}
		retry.Since, retry.Claimed = first, h.Claimed() // as the Transport's hold asks again
		if _, ok := s.Acquire(c, cfg, Ask{Turns: true}, new(Lease)); ok {
			t.Fatal("C granted in the pause")
		}
		if cl := s.turns.c; len(cl) != 2 || cl[0].since != instant(first) || cl[0].n != 1 {
			t.Fatalf("claims %+v; want B's (500ms, n=1), then C's", cl)
		}
		end = hb.Until()
		if end.Before(retry.After) {
			end = retry.After
		}
		return s, cfg, retry, end
	}
	bStands := func(t *testing.T, s *State, when string) {
		if cl := s.turns.c; len(cl) == 0 || cl[0].since != instant(first) || cl[0].n != 1 {
			t.Errorf("%s: claims %+v; want B's (500ms, n=1) standing", when, cl)
		}
	}
	t.Run("gives up", func(t *testing.T) {
		s, cfg, retry, end := setup(t)
		if retry.Claimed {
			s.Leave(retry.Since, retry.Claimed, retry.Placed)
		}
		bStands(t, s, "after A's retry gave up")
		if _, ok := s.Acquire(end, cfg, Ask{Turns: true, Since: c, Claimed: true}, new(Lease)); ok {
			t.Error("C (first asked at 600ms) granted at the pause's end ahead of B (500ms, waiting)")
		}
	})
	t.Run("granted", func(t *testing.T) {
		s, cfg, retry, end := setup(t)
		if h, ok := s.Acquire(end, cfg, retry, new(Lease)); !ok {
			t.Fatalf("A's retry held %+v at the pause's end", h)
		}
		bStands(t, s, "after A's retry was granted")
	})
}

// A retry refused for its quota claims a turn for its wait, until its
// After: a wait that ended past MaxPause (its After set before the clock
// stepped back 30h) made a claim that held the requests that cost 6 hours
// past the key's pause, itself bounded to MaxPause. The claim lasts no
// longer than a pause may.
func TestRetryClaimBoundedByMaxPause(t *testing.T) {
	var s State
	cfg := Config{}
	var p Lease
	p.SetCost(Cost{Tokens: 1})
	s.Acquire(t0, &cfg, Ask{}, &p)
	s.Release(t0, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: openAIQuotas(499, 1000, 59*time.Second)})
	now := t0.Add(time.Second)
	var l Lease
	l.SetCost(Cost{Tokens: 800})
	ask := Ask{Turns: true, First: now, After: now.Add(30 * time.Hour), AfterReason: ReasonQuota}
	h, ok := s.Acquire(now, &cfg, ask, &l)
	if ok || !h.Claimed() || len(s.turns.c) != 1 {
		t.Fatalf("granted %v, claimed %v, claims %+v; want held, one claim", ok, h.Claimed(), s.turns.c)
	}
	if until, limit := s.turns.c[0].until, instant(now.Add(MaxPause))+turnGrace; until > limit {
		t.Errorf("the claim lapses %v after now, past MaxPause (%v)", time.Duration(until-instant(now)), MaxPause)
	}
}
