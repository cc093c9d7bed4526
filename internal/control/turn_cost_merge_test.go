package control

import (
	"testing"
	"time"
)

// A retry held for its cost claims a turn "of the requests that cost" at
// once, by its first attempt's instant. When the claim of that instant
// already stood for an ordinary hold (the key's pause, which held the same
// retry a moment before, or another request that first asked at that
// nanosecond), the two merged into a claim no longer for a cost only,
// which held a request that costs nothing (a GET beside the completions)
// until the retry's tokens had room. The hold asked for last decides now.

// setupCostKey returns a key that knows a token quota: 1000 of 60000 left
// at t0, refilling at 60000/full.
func setupCostKey(full time.Duration) (*State, *Config) {
	s, cfg := new(State), new(Config)
	var p Lease
	p.SetCost(Cost{Tokens: 1})
	s.Acquire(t0, cfg, Ask{}, &p)
	s.Release(t0, cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: openAIQuotas(499, 1000, full)})
	return s, cfg
}

// One retry: held by the key's pause past its own After (the pause's
// jitter), then held for its cost.
func TestRetryCostClaimLetsFreeRequestsGo(t *testing.T) {
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	first := at(5 * time.Millisecond)
	s, cfg := setupCostKey(590 * time.Second) // 100 tokens a second
	var r, q Lease
	r.SetCost(Cost{Tokens: 800})
	q.SetCost(Cost{Tokens: 150})
	if _, ok := s.Acquire(first, cfg, Ask{Turns: true}, &r); !ok {
		t.Fatal("R (800 of 1000) not granted")
	}
	if _, ok := s.Acquire(first, cfg, Ask{Turns: true}, &q); !ok {
		t.Fatal("Q (150 of 200) not granted")
	}
	// R is refused with Retry-After: 1; the key pauses a little longer
	// (jitter).
	refused := at(10 * time.Millisecond)
	plan := s.Release(refused, cfg, &r, &Outcome{First: true, Bytes: -1, Refused: true, Rejected: true, Rand: 1 << 62,
		Refusal: Refusal{Wait: time.Second, Given: true, Reason: ReasonRetryAfter, Retryable: true, MaxWait: time.Minute}})
	end := at(time.Duration(s.pauseUntil - instant(t0)))
	after := refused.Add(plan.Wait)
	if !plan.Retry || !after.Before(end) {
		t.Fatalf("plan %+v, pause until %v; want a retry whose wait ends before the pause", plan, end.Sub(t0))
	}

	// R's retry, as RoundTrip and hold ask it.
	retry := Ask{Turns: true, First: first, After: after, AfterReason: plan.Reason}
	h, _ := s.Acquire(refused, cfg, retry, &r)
	retry.Since, retry.Claimed = first, h.Claimed()
	// Q's answer, when R's own wait ends, says the tokens are spent; it
	// wakes R (a new generation), which the pause holds.
	s.Release(after, cfg, &q, &Outcome{Bytes: -1, Quotas: openAIQuotas(498, 0, 590*time.Second)})
	h, ok := s.Acquire(after, cfg, retry, &r)
	if ok || !h.Until().Equal(end) {
		t.Fatalf("R at its After: granted %v, held until %v; want held by the pause until %v", ok, h.Until().Sub(t0), end.Sub(t0))
	}
	retry.Claimed = h.Claimed()
	h, ok = s.Acquire(end, cfg, retry, &r) // about 100 tokens: held for its cost
	if ok || h.Reason != ReasonQuota || !h.Until().After(end.Add(5*time.Second)) {
		t.Fatalf("R at the pause's end: granted %v, held %v until %v; want held for its cost, seconds", ok, h.Reason, h.Until().Sub(t0))
	}

	get := end.Add(time.Millisecond) // costs nothing
	if h, ok := s.Acquire(get, cfg, Ask{Turns: true}, new(Lease)); !ok && h.Until().After(end.Add(time.Duration(turnGrace))) {
		t.Errorf("a request that costs nothing, at %v: held %v until %v, behind R waiting for its tokens (claims %+v); want it to go by %v",
			get.Sub(t0), h.Reason, h.Until().Sub(t0), s.turns.c, end.Add(time.Duration(turnGrace)).Sub(t0))
	}
}

// Two requests of one instant: B held by the pause, A's retry then held
// for its cost.
func TestRetryCostClaimMergedAtOneInstant(t *testing.T) {
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	first := at(5 * time.Millisecond)        // A and B first ask then
	s, cfg := setupCostKey(59 * time.Second) // 1000 tokens a second
	var a, b Lease
	a.SetCost(Cost{Tokens: 800})
	if _, ok := s.Acquire(first, cfg, Ask{Turns: true}, &a); !ok {
		t.Fatal("A (800 of 1000) not granted")
	}
	b.SetCost(Cost{Tokens: 1000})
	hb, ok := s.Acquire(first, cfg, Ask{Turns: true}, &b) // same nanosecond as A
	if ok {
		t.Fatal("B (1000 of 200 left) granted")
	}
	// A is refused for its quota (the server counted more): the key
	// pauses about 700ms, and A retries then.
	refused := at(10 * time.Millisecond)
	plan := s.Release(refused, cfg, &a, &Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
		Quotas: openAIQuotas(499, 900, 59*time.Second), Refusal: Refusal{Retryable: true, MaxWait: time.Minute}})
	if !plan.Retry || plan.Reason != ReasonQuota {
		t.Fatalf("plan %+v; want a retry for the quota", plan)
	}
	// B, woken, is held by the pause: it claims the turn of 5ms.
	bAsk := Ask{Turns: true, Since: first, Claimed: hb.Claimed()}
	if hb, ok = s.Acquire(refused, cfg, bAsk, &b); ok || !hb.Claimed() {
		t.Fatalf("B in the pause: granted %v, claimed %v", ok, hb.Claimed())
	}
	bAsk.Claimed = hb.Claimed()
	retry := Ask{Turns: true, First: first, After: refused.Add(plan.Wait), AfterReason: plan.Reason}
	ha, ok := s.Acquire(refused, cfg, retry, &a)
	if ok {
		t.Fatal("A's retry granted in the pause")
	}
	retry.Since, retry.Claimed = first, ha.Claimed()

	// The pause ends: B goes first (they share a place), as the probe.
	end := at(time.Duration(s.pauseUntil - instant(t0)))
	if h, ok := s.Acquire(end, cfg, bAsk, &b); !ok {
		t.Fatalf("B held %+v at the pause's end", h)
	}
	if ha, ok = s.Acquire(end, cfg, retry, &a); ok {
		t.Fatal("A's retry granted beside the probe")
	}
	retry.Claimed = ha.Claimed()
	// B's answer: 600 left, A (800) must wait for 200 more.
	answered := end.Add(20 * time.Millisecond)
	s.Release(answered, cfg, &b, &Outcome{Bytes: -1, Quotas: openAIQuotas(498, 600, 59*time.Second)})
	ha, ok = s.Acquire(answered, cfg, retry, &a)
	if ok || ha.Reason != ReasonQuota {
		t.Fatalf("A's retry, 600 left: granted %v, held %v; want held for its cost", ok, ha.Reason)
	}
	get := answered.Add(time.Millisecond) // costs nothing
	if h, ok := s.Acquire(get, cfg, Ask{Turns: true}, new(Lease)); !ok {
		t.Errorf("a request that costs nothing, at %v: held %v until %v (behind A's retry waiting for its tokens, claims %+v); want granted",
			get.Sub(t0), h.Reason, h.Until().Sub(t0), s.turns.c)
	}
}
