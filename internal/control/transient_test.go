package control

import (
	"testing"
	"time"
)

func TestDecideTransient(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	full := retryBudget{tokens: 5, at: instant(t0)}
	tests := []struct {
		name string
		r    Refusal
		rb   retryBudget
		want Plan
	}{
		{"backoff", Refusal{Backoff: 1200 * time.Millisecond, Retryable: true, MaxWait: time.Minute}, full,
			Plan{Wait: 1200 * time.Millisecond, Reason: ReasonTransient, Retry: true}},
		{"retry-after is a floor", Refusal{Wait: 5 * time.Second, Given: true, Backoff: time.Second, Retryable: true, MaxWait: time.Minute}, full,
			Plan{Wait: 5 * time.Second, Reason: ReasonRetryAfter, Retry: true}},
		{"retry-after below the backoff", Refusal{Wait: 0, Given: true, Backoff: time.Second, Retryable: true, MaxWait: time.Minute}, full,
			Plan{Wait: time.Second, Reason: ReasonTransient, Retry: true}},
		{"not resendable", Refusal{Backoff: time.Second, MaxWait: time.Minute}, full,
			Plan{Wait: time.Second, Reason: ReasonTransient}},
		{"beyond MaxWait", Refusal{Wait: time.Hour, Given: true, Retryable: true, MaxWait: time.Minute}, full,
			Plan{Wait: time.Hour, Reason: ReasonRetryAfter}},
		{"beyond the deadline", Refusal{Backoff: 2 * time.Second, Retryable: true, MaxWait: time.Minute, Deadline: t0.Add(time.Second)}, full,
			Plan{Wait: 2 * time.Second, Reason: ReasonTransient}},
		{"budget short, back within the backoff", Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}, retryBudget{tokens: 0.5, at: instant(t0)},
			Plan{Wait: time.Second, Reason: ReasonTransient, Retry: true}},
		{"budget spent: spaced out", Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}, retryBudget{tokens: -3, at: instant(t0)},
			Plan{Wait: 2 * time.Second, Reason: ReasonRetryBudget, Retry: true}},
		{"budget spent past the deadline: given back", Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute, Deadline: t0.Add(1500 * time.Millisecond)}, retryBudget{tokens: -3, at: instant(t0)},
			Plan{Wait: time.Second, Reason: ReasonTransient, Denied: ReasonRetryBudget}},
		{"budget spent past MaxWait: MaxWait", Refusal{Backoff: time.Second, Retryable: true, MaxWait: 1500 * time.Millisecond}, retryBudget{tokens: -3, at: instant(t0)},
			Plan{Wait: 1500 * time.Millisecond, Reason: ReasonRetryBudget, Retry: true}},
		{"budget spent, affording it before MaxWait", Refusal{Backoff: time.Second, Retryable: true, MaxWait: 5 * time.Second}, retryBudget{tokens: -6, at: instant(t0)},
			Plan{Wait: 3500 * time.Millisecond, Reason: ReasonRetryBudget, Retry: true}},
		{"budget spent, affording it within MaxWait and the deadline", Refusal{Backoff: time.Second, Retryable: true, MaxWait: 8 * time.Second, Deadline: t0.Add(10 * time.Second)}, retryBudget{tokens: -11, at: instant(t0)},
			Plan{Wait: 6 * time.Second, Reason: ReasonRetryBudget, Retry: true}},
		{"budget spent, affording it before the deadline", Refusal{Backoff: time.Second, Retryable: true, MaxWait: 10 * time.Minute, Deadline: t0.Add(3 * time.Second)}, retryBudget{tokens: -4, at: instant(t0)},
			Plan{Wait: 2500 * time.Millisecond, Reason: ReasonRetryBudget, Retry: true}},
		{"budget spent past MaxWait and the deadline: given back", Refusal{Backoff: time.Second, Retryable: true, MaxWait: 1500 * time.Millisecond, Deadline: t0.Add(1200 * time.Millisecond)}, retryBudget{tokens: -3, at: instant(t0)},
			Plan{Wait: time.Second, Reason: ReasonTransient, Denied: ReasonRetryBudget}},
		{"budget spent in an outage", Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}, retryBudget{tokens: -3, at: instant(t0), run: outageRun},
			Plan{Wait: time.Second, Reason: ReasonTransient, Denied: ReasonRetryBudget}},
		{"stopped", Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}, retryBudget{tokens: 5, at: instant(t0), stopUntil: instant(t0.Add(time.Minute))},
			Plan{Wait: time.Second, Reason: ReasonTransient, Denied: ReasonStopped}},
	}
	for _, tt := range tests {
		if got := DecideTransient(t0, &tt.r, tt.rb); got != tt.want {
			t.Errorf("%s: DecideTransient = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// A transient failure spends one retry when it retries, and neither
// pauses the key nor changes anything else.
func TestReleaseTransient(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var cfg Config
	var s State
	var l Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &l); !ok {
		t.Fatal("first Acquire held")
	}
	before := s.retry.left(instant(t0))
	out := Outcome{Failed: true, Transient: true, Refusal: Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}}
	p := s.Release(t0, &cfg, &l, &out)
	if !p.Retry || p.Pause != 0 || s.pauseUntil != 0 {
		t.Errorf("plan %+v, pause until %d; want a retry and no pause", p, s.pauseUntil)
	}
	if after := s.retry.left(instant(t0)); after != before-1 {
		t.Errorf("retries left %d, want %d", after, before-1)
	}
}

// A wait that ends at the deadline does not fit (see Refusal.fits), for a
// transient failure as for a refusal: DecideTransient kept a check of its
// own, which planned a retry that could go only as the deadline passed
// (State.transient's later check dropped it, with no Denied reason).
func TestDecideTransientWaitEndingAtDeadline(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	full := retryBudget{tokens: 5, at: instant(t0)}
	r := Refusal{Wait: 2 * time.Second, Given: true, Retryable: true, MaxWait: time.Minute, Deadline: t0.Add(2 * time.Second)}
	if p := Decide(t0, &r, &Lease{}, full, 0); p.Retry {
		t.Fatalf("Decide = %+v; the refusal's own check should not retry", p)
	}
	if p := DecideTransient(t0, &r, full); p.Retry {
		t.Errorf("DecideTransient = %+v; want no retry: the wait ends at the deadline, as Decide and Refusal.fits judge", p)
	}
}

// A refusal's retry the budget cannot afford now is spaced out until it
// can, when that fits MaxWait and the deadline; when it does not, or when
// the budget owes all it may, it keeps the server's wait, the key's pause
// and probe spacing it: outside an outage the budget does not drop it (it
// went back to the caller, half of a flight of 100 with a deadline of 8 s,
// each retry served a second later), nor hold it to MaxWait or the
// deadline, together with the others so held, with no time left to go. In
// an outage it goes back.
func TestDecideRetryBudgetSpacing(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	owes := retryBudget{tokens: -3, at: instant(t0)} // a retry in 2 s
	refusal := func(maxWait time.Duration, deadline time.Duration) Refusal {
		r := Refusal{Wait: time.Second, Given: true, Reason: ReasonRetryAfter, Retryable: true, MaxWait: maxWait}
		if deadline > 0 {
			r.Deadline = t0.Add(deadline)
		}
		return r
	}
	tests := []struct {
		name   string
		r      Refusal
		rb     retryBudget
		retry  bool
		wait   time.Duration
		reason Reason
	}{
		{"spaced", refusal(time.Minute, 0), owes, true, 2 * time.Second, ReasonRetryBudget},
		{"spaced within the deadline", refusal(time.Minute, 3*time.Second), owes, true, 2 * time.Second, ReasonRetryBudget},
		{"MaxWait first: the server's wait", refusal(1500*time.Millisecond, 0), owes, true, time.Second, ReasonRetryAfter},
		{"affordable before MaxWait", refusal(5*time.Second, 0), retryBudget{tokens: -6, at: instant(t0)}, true, 3500 * time.Millisecond, ReasonRetryBudget},
		{"owing all it may: the server's wait", refusal(time.Minute, 0), retryBudget{tokens: -retryTokenCap, at: instant(t0)}, true, time.Second, ReasonRetryAfter},
		{"deadline first: the server's wait", refusal(time.Minute, 1500*time.Millisecond), owes, true, time.Second, ReasonRetryAfter},
		{"MaxWait and deadline first: the server's wait", refusal(1500*time.Millisecond, 1200*time.Millisecond), owes, true, time.Second, ReasonRetryAfter},
		{"outage", refusal(time.Minute, 1500*time.Millisecond), retryBudget{tokens: -3, at: instant(t0), run: outageRun}, false, time.Second, ReasonRetryAfter},
	}
	for _, tt := range tests {
		var l Lease
		p := Decide(t0, &tt.r, &l, tt.rb, 1)
		if p.Retry != tt.retry || p.Wait < tt.wait || p.Wait > tt.wait+tt.wait/10 || p.Reason != tt.reason {
			t.Errorf("%s: Decide = %+v, want retry %v after %v (jitter aside), reason %v", tt.name, p, tt.retry, tt.wait, tt.reason)
		}
	}
}
