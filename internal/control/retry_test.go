package control

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// TestDepositShortcutMatches checks that deposit, with its shortcut for a
// full budget, leaves every budget as depositFull does: full or not,
// never refilled, with the clock gone back, and with tokens past the cap,
// infinite or not a number (as a decoded state may hold).
func TestDepositShortcutMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	tokens := []float64{0, -3, 0.5, retryTokenCap - retryShare, retryTokenCap - 1e-9, retryTokenCap, retryTokenCap + 1, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
	base := instant(t0)
	ats := []int64{0, 1, base - int64(time.Second), base, base + 1, base + int64(time.Hour)}
	shortcut := 0
	for _, tk := range tokens {
		for _, at := range ats {
			for range 20 {
				now := base + r.Int64N(int64(2*time.Second)) - int64(time.Second)
				a := retryBudget{tokens: tk, at: at, stopUntil: r.Int64N(3), run: r.Int32N(3), streak: r.Int32N(3)}
				b := a
				if a.at != 0 && a.tokens >= retryTokenCap {
					shortcut++
				}
				a.deposit(now)
				b.depositFull(now)
				if a != b && !(math.IsNaN(a.tokens) && math.IsNaN(b.tokens) && a.at == b.at) {
					t.Fatalf("deposit(%d) of tokens %v at %d: %+v, without the shortcut %+v", now, tk, at, a, b)
				}
			}
		}
	}
	if shortcut == 0 {
		t.Fatal("the shortcut was never taken")
	}
}

// TestRetryFitsKeyPause: a refusal whose own wait fits the request's
// deadline is not retried when another answer has paused the key past
// that deadline. The retry would fail waiting, a *WaitError for a request
// the server answered, its refusal drained; the refusal goes back to the
// caller instead, and the retry budget is not spent.
func TestRetryFitsKeyPause(t *testing.T) {
	var s State
	cfg := Config{}
	var p, a, b Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &p); !ok {
		t.Fatal("the probe is not granted")
	}
	q := []parse.Quota{{Policy: "default", Unit: "requests", Limit: 100, Window: time.Minute, Remaining: 99, Reset: time.Minute}}
	s.Release(t0, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: q})
	for _, l := range []*Lease{&a, &b} {
		if _, ok := s.Acquire(t0, &cfg, Ask{}, l); !ok {
			t.Fatal("two requests after the probe are not granted")
		}
	}
	refused := func(wait time.Duration, deadline time.Time) *Outcome {
		return &Outcome{First: true, Bytes: -1, Refused: true, Refusal: Refusal{
			Wait: wait, Given: true, Reason: ReasonRetryAfter, Retryable: true, MaxWait: 10 * time.Minute, Deadline: deadline,
		}}
	}
	if plan := s.Release(t0.Add(time.Millisecond), &cfg, &a, refused(30*time.Second, time.Time{})); !plan.Retry {
		t.Fatalf("Retry-After: 30, no deadline: plan %+v, want a retry", plan)
	}
	now := t0.Add(2 * time.Millisecond)
	retries := s.retry.tokens
	plan := s.Release(now, &cfg, &b, refused(0, now.Add(5*time.Second)))
	if plan.Retry {
		t.Errorf("Retry-After: 0, 5s to the deadline, the key paused 30s: plan %+v, want no retry", plan)
	}
	if s.retry.tokens < retries {
		t.Errorf("the retry budget went from %v to %v for a retry not taken", retries, s.retry.tokens)
	}
}
