package ratelimittest

import (
	"math/rand/v2"
	"testing"
	"time"
)

// origin is an arbitrary instant for the pure limiter tests.
var origin = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// check is one observation of a limiter at an offset since origin,
// optionally followed by admitting a request.
type check struct {
	at    time.Duration
	avail int64
	wait  time.Duration // for a request of cost 1
	reset time.Duration
	full  time.Duration
	take  int64 // cost admitted after the checks; 0 for none
}

func TestLimiters(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		checks []check
	}{
		{
			name:   "fixed window",
			policy: Policy{Algorithm: FixedWindow, Quota: 3, Window: 10 * time.Second},
			checks: []check{
				{at: 0, avail: 3, reset: 10 * time.Second, take: 1},
				{at: 0, avail: 2, reset: 10 * time.Second, full: 10 * time.Second, take: 2},
				{at: 0, avail: 0, wait: 10 * time.Second, reset: 10 * time.Second, full: 10 * time.Second},
				{at: 9500 * time.Millisecond, avail: 0, wait: 500 * time.Millisecond, reset: 500 * time.Millisecond, full: 500 * time.Millisecond},
				{at: 10 * time.Second, avail: 3, reset: 10 * time.Second},
				{at: 24 * time.Second, avail: 3, reset: 6 * time.Second, take: 3},
				{at: 29 * time.Second, avail: 0, wait: time.Second, reset: time.Second, full: time.Second},
			},
		},
		{
			name:   "sliding log",
			policy: Policy{Algorithm: SlidingLog, Quota: 2, Window: 10 * time.Second},
			checks: []check{
				{at: 0, avail: 2, reset: 10 * time.Second, take: 1},
				{at: 3 * time.Second, avail: 1, reset: 7 * time.Second, full: 7 * time.Second, take: 1},
				{at: 5 * time.Second, avail: 0, wait: 5 * time.Second, reset: 5 * time.Second, full: 8 * time.Second},
				{at: 10 * time.Second, avail: 1, reset: 3 * time.Second, full: 3 * time.Second, take: 1},
				{at: 12 * time.Second, avail: 0, wait: time.Second, reset: time.Second, full: 8 * time.Second},
				{at: 13 * time.Second, avail: 1, reset: 7 * time.Second, full: 7 * time.Second},
				{at: 20 * time.Second, avail: 2, reset: 10 * time.Second},
			},
		},
		{
			name:   "sliding window counter",
			policy: Policy{Algorithm: SlidingWindow, Quota: 10, Window: 10 * time.Second},
			checks: []check{
				// Spending 10 now leaves prev=10 at 10s; at 11s its weight is 9.
				{at: 0, avail: 10, reset: 11 * time.Second, take: 10},
				{at: 0, avail: 0, wait: 11 * time.Second, reset: 11 * time.Second, full: 20 * time.Second},
				{at: 10 * time.Second, avail: 0, wait: time.Second, reset: time.Second, full: 10 * time.Second},
				{at: 11 * time.Second, avail: 1, reset: time.Second, full: 9 * time.Second, take: 1},
				{at: 11 * time.Second, avail: 0, wait: time.Second, reset: time.Second, full: 19 * time.Second},
				// ceil(10*5/10) + 1 = 6 counted.
				{at: 15 * time.Second, avail: 4, reset: time.Second, full: 15 * time.Second},
				// prev=1, cur=0: ceil(1*5/10) = 1 counted.
				{at: 25 * time.Second, avail: 9, reset: 5 * time.Second, full: 5 * time.Second},
				{at: 40 * time.Second, avail: 10, reset: 11 * time.Second},
			},
		},
		{
			name:   "token bucket",
			policy: Policy{Algorithm: TokenBucket, Quota: 5, Window: 10 * time.Second}, // a token every 2s
			checks: []check{
				{at: 0, avail: 5, reset: 2 * time.Second, take: 5},
				{at: 0, avail: 0, wait: 2 * time.Second, reset: 2 * time.Second, full: 10 * time.Second},
				{at: time.Second, avail: 0, wait: time.Second, reset: time.Second, full: 9 * time.Second},
				{at: 2 * time.Second, avail: 1, reset: 2 * time.Second, full: 8 * time.Second, take: 1},
				// 2.5 tokens gained since 2s.
				{at: 7 * time.Second, avail: 2, reset: time.Second, full: 5 * time.Second},
				{at: 100 * time.Second, avail: 5, reset: 2 * time.Second},
			},
		},
		{
			name:   "token bucket uneven",
			policy: Policy{Algorithm: TokenBucket, Quota: 3, Window: time.Second}, // a token every 333.33ms
			checks: []check{
				{at: 0, avail: 3, reset: 333333334, take: 3},
				{at: 0, avail: 0, wait: 333333334, reset: 333333334, full: time.Second},
				{at: 333333333, avail: 0, wait: 1, reset: 1, full: 666666667},
				{at: 333333334, avail: 1, reset: 333333333, full: 666666666, take: 1},
				{at: time.Second, avail: 2, reset: 333333334, full: 333333334},
			},
		},
		{
			name:   "zero quota",
			policy: Policy{Algorithm: TokenBucket, Quota: 0, Window: time.Second},
			checks: []check{
				{at: 0, avail: 0, wait: -1, reset: time.Second},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := policies(Config{Policies: []Policy{tt.policy}})
			l := newLimiter(&ps[0], origin)
			for i, c := range tt.checks {
				now := origin.Add(c.at)
				if got := l.available(now); got != c.avail {
					t.Errorf("check %d at %v: available = %d, want %d", i, c.at, got, c.avail)
				}
				d, ok := l.wait(now, 1)
				if c.wait < 0 {
					if ok {
						t.Errorf("check %d at %v: wait(1) = %v, true; want never", i, c.at, d)
					}
				} else if d != c.wait || !ok {
					t.Errorf("check %d at %v: wait(1) = %v, %v; want %v, true", i, c.at, d, ok, c.wait)
				}
				if got, ok := l.reset(now); got != c.reset || !ok {
					t.Errorf("check %d at %v: reset = %v, %v; want %v, true", i, c.at, got, ok, c.reset)
				}
				if got := l.full(now); got != c.full {
					t.Errorf("check %d at %v: full = %v, want %v", i, c.at, got, c.full)
				}
				if c.take > 0 {
					l.take(now, c.take)
				}
			}
		})
	}
}

func TestConcurrencyLimiter(t *testing.T) {
	ps := policies(Config{Policies: []Policy{{Algorithm: Concurrency, Quota: 2}}})
	l := newLimiter(&ps[0], origin)
	l.take(origin, 1)
	if got := l.available(origin); got != 1 {
		t.Errorf("available with 1 of 2 in flight = %d, want 1", got)
	}
	l.take(origin, 1)
	if d, ok := l.wait(origin, 1); ok {
		t.Errorf("wait with 2 of 2 in flight = %v, true; want false", d)
	}
	if _, ok := l.reset(origin); ok {
		t.Errorf("reset ok = true, want false")
	}
	l.release(1)
	if d, ok := l.wait(origin, 1); d != 0 || !ok {
		t.Errorf("wait after release = %v, %v; want 0, true", d, ok)
	}
}

// TestLimiterConsistency checks, over random traffic, that wait names the
// exact instant of admission and agrees with available, which Ideal and the
// Handler both rely on.
func TestLimiterConsistency(t *testing.T) {
	algorithms := []Algorithm{FixedWindow, SlidingLog, SlidingWindow, TokenBucket}
	quotas := []int64{1, 3, 7, 100}
	windows := []time.Duration{time.Second, 7 * time.Second / 3, time.Minute}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, a := range algorithms {
		for _, q := range quotas {
			for _, w := range windows {
				ps := policies(Config{Policies: []Policy{{Algorithm: a, Quota: q, Window: w}}})
				l := newLimiter(&ps[0], origin)
				now := origin
				for i := range 300 {
					cost := 1 + rng.Int64N(q)
					d, ok := l.wait(now, cost)
					if !ok || d < 0 {
						t.Fatalf("%s q=%d w=%v step %d: wait(%d) = %v, %v; want >= 0, true", a, q, w, i, cost, d, ok)
					}
					if d > 0 {
						if e, _ := l.wait(now.Add(d-1), cost); e != 1 {
							t.Fatalf("%s q=%d w=%v step %d: wait(%d) 1ns before admission = %v, want 1ns", a, q, w, i, cost, e)
						}
						now = now.Add(d)
						if e, _ := l.wait(now, cost); e != 0 {
							t.Fatalf("%s q=%d w=%v step %d: wait(%d) at admission = %v, want 0", a, q, w, i, cost, e)
						}
					}
					if r := l.available(now); r < cost {
						t.Fatalf("%s q=%d w=%v step %d: available = %d below admitted cost %d", a, q, w, i, r, cost)
					} else if r < q {
						if e, _ := l.wait(now, r+1); e == 0 {
							t.Fatalf("%s q=%d w=%v step %d: available = %d, but %d is admitted", a, q, w, i, r, r+1)
						}
					}
					if r, _ := l.reset(now); r <= 0 {
						t.Fatalf("%s q=%d w=%v step %d: reset = %v, want > 0", a, q, w, i, r)
					}
					l.take(now, cost)
					now = now.Add(time.Duration(rng.Int64N(int64(w) / 2)))
				}
			}
		}
	}
}
