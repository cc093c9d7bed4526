package control

import (
	"testing"
	"time"
)

// refuseBare acquires a lease on s at now and releases it refused with no
// wait, the request's own backoff being backoff, with the random value rnd.
func refuseBare(t *testing.T, s *State, now time.Time, backoff time.Duration, rnd uint64) Plan {
	t.Helper()
	cfg := Config{}
	var l Lease
	if _, ok := s.Acquire(now, &cfg, Ask{}, &l); !ok {
		t.Fatalf("at %v: not granted", now.Sub(t0))
	}
	return s.Release(now, &cfg, &l, &Outcome{First: true, Bytes: -1, Refused: true, Rand: rnd,
		Refusal: Refusal{Backoff: backoff, Retryable: true, MaxWait: 10 * time.Minute}})
}

// A refusal that gives no wait waits the request's own backoff or the
// floor doubled, whichever is longer (Decide's doc). When the doubling was
// only a little longer than the backoff, its spread shortened it by up to
// a quarter, below the request's own backoff: 3s for a doubling of 4s and
// a backoff of 3.9s.
func TestSpreadKeepsOwnBackoff(t *testing.T) {
	var s State
	refuseBare(t, &s, t0, time.Second, 0)                  // floor: 1s
	refuseBare(t, &s, t0.Add(time.Second), time.Second, 0) // doubled once: 2s
	// Two short refusals in a row: the floor doubled is 4s; this request's
	// own (randomised) backoff is 3.9s.
	backoff := 3900 * time.Millisecond
	p := refuseBare(t, &s, t0.Add(3*time.Second), backoff, ^uint64(0))
	if p.Wait < backoff || p.Pause < backoff {
		t.Errorf("plan %+v: wait %v, pause %v, below the request's own backoff %v (the doubling is 4s)", p, p.Wait, p.Pause, backoff)
	}
}

// A Rand of 0 gives the un-jittered plan (spread's doc; the tables rely
// on it). In an outage whose flights mostly gave a wait of a second (run
// 46, streak 1), a bare refusal's pause is the floor doubled for the 6
// flights since the outage began: a minute. With Rand 0 it was a minute
// only when the request's spread did not draw (backoff 2s); when it drew
// (backoff 1s), the outage's spread took the stream's second draw, which
// is not 0, and the pause was 46.75s.
func TestSpreadRandZeroOutagePause(t *testing.T) {
	rb := retryBudget{run: outageRun + 6, streak: 1}
	for _, backoff := range []time.Duration{2 * time.Second, time.Second} {
		r := &Refusal{Backoff: backoff, Retryable: true, MaxWait: 10 * time.Minute}
		p := Decide(t0, r, &Lease{}, rb, 0)
		if p.Pause != BackoffMax {
			t.Errorf("backoff %v, Rand 0: pause %v, want the un-jittered doubling %v", backoff, p.Pause, BackoffMax)
		}
	}
}

// TestSpreadRandZeroOutagePauseState is TestSpreadRandZeroOutagePause
// through State: a bare refusal, 45 flights refused with Retry-After: 1,
// then a bare refusal with a backoff of a second, all with Rand 0.
func TestSpreadRandZeroOutagePauseState(t *testing.T) {
	for _, backoff := range []time.Duration{2 * time.Second, time.Second} {
		var s State
		cfg := Config{}
		now := t0
		p := refuseBare(t, &s, now, time.Second, 0)
		now = now.Add(p.Pause)
		for i := range 45 {
			var l Lease
			if _, ok := s.Acquire(now, &cfg, Ask{}, &l); !ok {
				t.Fatalf("flight %d at %v: not granted", i, now.Sub(t0))
			}
			p = s.Release(now, &cfg, &l, &Outcome{First: true, Bytes: -1, Refused: true,
				Refusal: Refusal{Wait: time.Second, Given: true, Reason: ReasonRetryAfter, Retryable: true, MaxWait: 10 * time.Minute}})
			now = now.Add(p.Pause)
		}
		p = refuseBare(t, &s, now, backoff, 0)
		if p.Pause != BackoffMax {
			t.Errorf("backoff %v, Rand 0: pause %v, want the un-jittered doubling %v (run %d, streak %d)", backoff, p.Pause, BackoffMax, s.retry.run, s.retry.streak)
		}
	}
}
