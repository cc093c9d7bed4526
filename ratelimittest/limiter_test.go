package ratelimittest

import (
	"math"
	"math/rand/v2"
	"slices"
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
			name:   "fixed window from the first request",
			policy: Policy{Algorithm: FixedWindowFromFirst, Quota: 3, Window: 10 * time.Second},
			checks: []check{
				// Nothing is open until the first admission, at 2s.
				{at: 2 * time.Second, avail: 3, reset: 10 * time.Second, take: 1},
				{at: 2 * time.Second, avail: 2, reset: 10 * time.Second, full: 10 * time.Second, take: 2},
				{at: 11 * time.Second, avail: 0, wait: time.Second, reset: time.Second, full: time.Second},
				// The window ended at 12s; the next opens at 15s.
				{at: 15 * time.Second, avail: 3, reset: 10 * time.Second, take: 3},
				{at: 24 * time.Second, avail: 0, wait: time.Second, reset: time.Second, full: time.Second},
				{at: 25 * time.Second, avail: 3, reset: 10 * time.Second},
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
			name:   "sliding window counter rounded",
			policy: Policy{Algorithm: SlidingWindowRounded, Quota: 10, Window: 10 * time.Second},
			checks: []check{
				// Spending 10 now leaves prev=10 at 10s; its weight rounds
				// to 9 once below 9.5, just after 10.5s, and to 0 once
				// below 0.5, just after 19.5s: the quota is whole then.
				{at: 0, avail: 10, reset: 10500*time.Millisecond + 1, take: 10},
				{at: 0, avail: 0, wait: 10500*time.Millisecond + 1, reset: 10500*time.Millisecond + 1, full: 19500*time.Millisecond + 1},
				{at: 10 * time.Second, avail: 0, wait: 500*time.Millisecond + 1, reset: 500*time.Millisecond + 1, full: 9500*time.Millisecond + 1},
				{at: 11 * time.Second, avail: 1, reset: 500*time.Millisecond + 1, full: 8500*time.Millisecond + 1, take: 1},
				// round(10*9/10) + 1 = 10; the weight falls below 8.5 after 11.5s.
				// Whole once the 1 of this window, prev from 20s, weighs
				// under a half: just after 25s.
				{at: 11 * time.Second, avail: 0, wait: 500*time.Millisecond + 1, reset: 500*time.Millisecond + 1, full: 14*time.Second + 1},
				// round(10*5/10) + 1 = 6 counted.
				{at: 15 * time.Second, avail: 4, reset: 500*time.Millisecond + 1, full: 10*time.Second + 1},
				// prev=1, cur=0: round(1*5/10) = round(0.5) = 1, halves up.
				{at: 25 * time.Second, avail: 9, reset: 1, full: 1},
				// Then round(1*4.999…/10) = 0; spending all 10 leaves prev=10
				// at 30s, whose weight rounds to 9 just after 30.5s.
				{at: 25*time.Second + 1, avail: 10, reset: 5500 * time.Millisecond},
				{at: 40 * time.Second, avail: 10, reset: 10500*time.Millisecond + 1},
			},
		},
		{
			name:   "leaky bucket",
			policy: Policy{Algorithm: LeakyBucket, Quota: 10, Window: time.Second, Burst: 2}, // leaks one every 100ms
			checks: []check{
				// A fresh bucket: the first request leaves no excess.
				{at: 0, avail: 3, reset: 100 * time.Millisecond, take: 1},
				{at: 0, avail: 2, reset: 100 * time.Millisecond, full: 100 * time.Millisecond, take: 2},
				{at: 0, avail: 0, wait: 100 * time.Millisecond, reset: 100 * time.Millisecond, full: 300 * time.Millisecond},
				// 500 of the 3000 thousandths have leaked.
				{at: 50 * time.Millisecond, avail: 0, wait: 50 * time.Millisecond, reset: 50 * time.Millisecond, full: 250 * time.Millisecond},
				{at: 99*time.Millisecond + 999999, avail: 0, wait: 1, reset: 1, full: 200*time.Millisecond + 1},
				{at: 100 * time.Millisecond, avail: 1, reset: 100 * time.Millisecond, full: 200 * time.Millisecond, take: 1},
				// Drained: the next request leaves no excess again.
				{at: time.Second, avail: 3, reset: 100 * time.Millisecond},
			},
		},
		{
			name:   "leaky bucket no burst",
			policy: Policy{Algorithm: LeakyBucket, Quota: 1, Window: 3 * time.Second},
			checks: []check{
				// 333 thousandths a second: 333*3003/1000 = 999.999 rounds
				// down, so the 1000 of a request leak in 3004ms.
				{at: 0, avail: 1, reset: 3004 * time.Millisecond, take: 1},
				{at: 0, avail: 0, wait: 3004 * time.Millisecond, reset: 3004 * time.Millisecond, full: 3004 * time.Millisecond},
				{at: 3003 * time.Millisecond, avail: 0, wait: time.Millisecond, reset: time.Millisecond, full: time.Millisecond},
				{at: 3004 * time.Millisecond, avail: 1, reset: 3004 * time.Millisecond},
			},
		},
		{
			name:   "leaky bucket zero quota",
			policy: Policy{Algorithm: LeakyBucket, Quota: 0, Window: time.Second, Burst: 5},
			checks: []check{
				{at: 0, avail: 0, wait: -1, reset: time.Second},
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
			l := newLimiter(&ps[0], origin, 0)
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

// TestLeakyBucketNginx replays nginx's limit_req arithmetic: thousandths
// of a request, whole milliseconds, the leak rounded down before the
// request is added, and refusals that change nothing.
func TestLeakyBucketNginx(t *testing.T) {
	ps := policies(Config{Policies: []Policy{{Algorithm: LeakyBucket, Quota: 10, Window: time.Second, Burst: 5}}})
	l := newLimiter(&ps[0], origin, 0).(*leakyBucket)
	if l.rate != 10000 || l.burst != 5000 {
		t.Fatalf("rate, burst = %d, %d; want 10000, 5000", l.rate, l.burst)
	}
	// burst=5 nodelay: six at once, then one every 100ms.
	var got []int
	for ms := range 1000 {
		now := origin.Add(time.Duration(ms) * time.Millisecond)
		for {
			if d, _ := l.wait(now, 1); d != 0 {
				break
			}
			l.take(now, 1)
			got = append(got, ms)
		}
	}
	want := []int{0, 0, 0, 0, 0, 0, 100, 200, 300, 400, 500, 600, 700, 800, 900}
	if !slices.Equal(got, want) {
		t.Errorf("admitted at ms %v, want %v", got, want)
	}
	// Within a millisecond, the leak of the fraction is not lost.
	now := origin.Add(1050*time.Millisecond + 400*time.Microsecond)
	if d, _ := l.wait(now, 1); d != 0 {
		t.Errorf("wait at 1050.4ms = %v, want 0", d)
	}
	if l.excess != 5000 {
		t.Errorf("excess = %d, want 5000", l.excess)
	}
	if _, ok := l.wait(now, 7); ok {
		t.Errorf("wait(7) with burst 5 ok, want never")
	}
	if d, ok := l.wait(origin.Add(10*time.Second), 6); d != 0 || !ok {
		t.Errorf("wait(6) when drained = %v, %v; want 0, true", d, ok)
	}
}

// TestLeakyBucketSlowRate checks that a rate under a thousandth of a
// request a second, which nginx's arithmetic rounds down to none, is kept
// exact: with no burst, a request is admitted every Window/Quota, not every
// 1000 s, and the reset says so.
func TestLeakyBucketSlowRate(t *testing.T) {
	const year = 365 * 24 * time.Hour
	for _, p := range []Policy{
		{Algorithm: LeakyBucket, Quota: 1, Window: time.Hour},
		{Algorithm: LeakyBucket, Quota: 10, Window: 24 * time.Hour},
		{Algorithm: LeakyBucket, Quota: 1, Window: 50 * year},
	} {
		ps := policies(Config{Policies: []Policy{p}})
		l := newLimiter(&ps[0], origin, 0)
		every := p.Window / time.Duration(p.Quota)
		now := origin
		for i := range 3 {
			if d, ok := l.wait(now, 1); d != 0 || !ok {
				t.Fatalf("%d per %v, request %d at %v: wait = %v, %v; want 0, true", p.Quota, p.Window, i+1, now.Sub(origin), d, ok)
			}
			l.take(now, 1)
			if d, _ := l.wait(now, 1); d != every {
				t.Fatalf("%d per %v, after request %d: wait = %v, want %v", p.Quota, p.Window, i+1, d, every)
			}
			if d, _ := l.reset(now); d != every {
				t.Fatalf("%d per %v, after request %d: reset = %v, want %v", p.Quota, p.Window, i+1, d, every)
			}
			if d, _ := l.wait(now.Add(every-time.Millisecond), 1); d != time.Millisecond {
				t.Fatalf("%d per %v, a millisecond before request %d: wait = %v, want 1ms", p.Quota, p.Window, i+2, d)
			}
			now = now.Add(every)
		}
	}
}

// TestLeakyBucketZeroQuota checks that a leaky bucket of Quota 0 admits a
// request of no cost, refuses any other for ever, and once overdrawn (a
// response longer than its cost at admission) refuses even one of no cost
// for ever rather than dividing by its rate of zero.
func TestLeakyBucketZeroQuota(t *testing.T) {
	ps := policies(Config{Policies: []Policy{{Algorithm: LeakyBucket, Quota: 0, Window: time.Second}}})
	l := newLimiter(&ps[0], origin, 0)
	if d, ok := l.wait(origin, 0); d != 0 || !ok {
		t.Errorf("wait(0) = %v, %v; want 0, true", d, ok)
	}
	if _, ok := l.wait(origin, 1); ok {
		t.Errorf("wait(1) ok, want never")
	}
	l.take(origin, 0)
	l.take(origin, 5)
	if _, ok := l.wait(origin.Add(time.Hour), 0); ok {
		t.Errorf("wait(0) overdrawn ok, want never")
	}
	if got := l.available(origin); got != 0 {
		t.Errorf("available = %d, want 0", got)
	}
}

// TestLeakyBucketHugeCounts checks that the counts of a leaky bucket do
// not wrap around: not at MaxBurst, nor overdrawn by a response of the
// most bytes an int64 counts, after which the next request waits rather
// than being admitted at once. (The excess saturates: at MaxBurst, it is
// then under two requests above the burst.)
func TestLeakyBucketHugeCounts(t *testing.T) {
	for _, burst := range []int64{0, MaxBurst} {
		ps := policies(Config{Policies: []Policy{{Algorithm: LeakyBucket, Quota: 1, Window: time.Second, Burst: burst}}})
		l := newLimiter(&ps[0], origin, 0)
		if got := l.available(origin); got != burst+1 {
			t.Errorf("burst %d: available = %d, want %d", burst, got, burst+1)
		}
		if d, _ := l.reset(origin); d != time.Second {
			t.Errorf("burst %d: reset = %v, want 1s", burst, d)
		}
		l.take(origin, math.MaxInt64)
		now := origin.Add(time.Millisecond)
		if d, ok := l.wait(now, 1); d <= 0 || !ok {
			t.Errorf("burst %d, overdrawn: wait = %v, %v; want > 0, true", burst, d, ok)
		}
		if d, _ := l.reset(now); d <= 0 {
			t.Errorf("burst %d, overdrawn: reset = %v, want > 0", burst, d)
		}
		if got := l.available(now); got != 0 {
			t.Errorf("burst %d, overdrawn: available = %d, want 0", burst, got)
		}
	}
}

func TestWindowEnd(t *testing.T) {
	tests := []struct {
		policy Policy
		at     time.Duration
		want   time.Duration
		ok     bool
	}{
		{Policy{Algorithm: FixedWindow, Quota: 1, Window: 2 * time.Second}, 4500 * time.Millisecond, 1500 * time.Millisecond, true},
		{Policy{Algorithm: SlidingWindow, Quota: 1, Window: 2 * time.Second}, 4500 * time.Millisecond, 1500 * time.Millisecond, true},
		{Policy{Algorithm: SlidingWindowRounded, Quota: 1, Window: 2 * time.Second}, 0, 2 * time.Second, true},
		{Policy{Algorithm: SlidingLog, Quota: 1, Window: 2 * time.Second}, 0, 0, false},
		{Policy{Algorithm: TokenBucket, Quota: 1, Window: 2 * time.Second}, 0, 0, false},
		{Policy{Algorithm: LeakyBucket, Quota: 1, Window: 2 * time.Second}, 0, 0, false},
		{Policy{Algorithm: Concurrency, Quota: 1}, 0, 0, false},
	}
	for _, tt := range tests {
		ps := policies(Config{Policies: []Policy{tt.policy}})
		l := newLimiter(&ps[0], origin, 0)
		if got, ok := l.windowEnd(origin.Add(tt.at)); got != tt.want || ok != tt.ok {
			t.Errorf("%s at %v: windowEnd = %v, %v; want %v, %v", tt.policy.Algorithm, tt.at, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMulDivRound(t *testing.T) {
	tests := []struct{ a, b, c, want int64 }{
		{1, 5, 10, 1}, // 0.5 rounds up
		{1, 4, 10, 0},
		{3, 5, 10, 2}, // 1.5
		{7, 3, 10, 2}, // 2.1
		{1 << 62, 4, 2, math.MaxInt64},
	}
	for _, tt := range tests {
		if got := mulDivRound(tt.a, tt.b, tt.c); got != tt.want {
			t.Errorf("mulDivRound(%d, %d, %d) = %d, want %d", tt.a, tt.b, tt.c, got, tt.want)
		}
	}
}

func TestConcurrencyLimiter(t *testing.T) {
	ps := policies(Config{Policies: []Policy{{Algorithm: Concurrency, Quota: 2}}})
	l := newLimiter(&ps[0], origin, 0)
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
	algorithms := []Algorithm{FixedWindow, FixedWindowFromFirst, SlidingLog, SlidingWindow, SlidingWindowRounded, TokenBucket, LeakyBucket}
	quotas := []int64{1, 3, 7, 100}
	windows := []time.Duration{time.Second, 7 * time.Second / 3, time.Minute}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, a := range algorithms {
		for _, q := range quotas {
			for _, w := range windows {
				// A leaky bucket admits up to Burst+1 at once.
				ps := policies(Config{Policies: []Policy{{Algorithm: a, Quota: q, Window: w, Burst: q - 1}}})
				l := newLimiter(&ps[0], origin, 0)
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
