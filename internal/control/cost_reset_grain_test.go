package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A reset read for a refill rate is read as long as the unit it is
// stated in lets it be (see costs.apply): a server may have rounded it
// down, or to the nearest.
func TestStatedGrain(t *testing.T) {
	for _, tt := range []struct {
		dialect string
		reset   time.Duration
		want    time.Duration
	}{
		{"openai", 59 * time.Second, time.Second},
		{"openai", 59400 * time.Millisecond, 100 * time.Millisecond},
		{"openai", 59410 * time.Millisecond, 10 * time.Millisecond},
		{"openai", 59411 * time.Millisecond, time.Millisecond},
		// A duration to the microsecond, or to the nanosecond.
		{"openai", 1624999 * time.Microsecond, 0},
		{"openai", 59411*time.Millisecond + time.Microsecond, 0},
		{"anthropic", 59411*time.Millisecond + time.Microsecond, time.Second},
	} {
		// Arrived at 0.25s past a second, the server's clock estimated
		// 0.3s ahead: a reset of 0.45s is one whole by it.
		now := int64(10*time.Second + 250*time.Millisecond)
		l := &Lease{skew: int64(300 * time.Millisecond), skewOK: true}
		if got := statedGrain(&parse.Quota{Dialect: tt.dialect, Reset: tt.reset}, now, l); got != int64(tt.want) {
			t.Errorf("%s reset %v: grain %v, want %v", tt.dialect, tt.reset, time.Duration(got), tt.want)
		}
	}
	// Instants in whole seconds, measured from the estimate of the
	// server's clock or, under a Date far off, from now.
	now := int64(10*time.Second + 250*time.Millisecond)
	l := &Lease{skew: int64(300*time.Millisecond + 1), skewOK: true}
	for _, reset := range []time.Duration{59*time.Second + 450*time.Millisecond - 1, 59*time.Second + 750*time.Millisecond} {
		if got := statedGrain(&parse.Quota{Dialect: "openai", Reset: reset}, now, l); got != int64(time.Second) {
			t.Errorf("openai reset %v, arrived at %v, the server's clock %v ahead: grain %v, want 1s", reset, time.Duration(now), time.Duration(l.skew), time.Duration(got))
		}
	}
}

// A refusal of a request that lacked tokens, as the server counts them,
// whose estimate with its reset read a grain longer is below the refill
// rate kept, shows the server rounds its resets down or to the nearest:
// the rate is that estimate, and every later one is a floor too, the
// highest still kept. The binary form keeps it so.
func TestRefillFlooredByRefusal(t *testing.T) {
	var s State
	cfg := &Config{}
	var p Lease
	p.SetCost(Cost{Tokens: 1})
	s.Acquire(t0, cfg, Ask{}, &p)
	// 59,000 used, whole in 59s: 1000 a second.
	s.Release(t0, cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: openAIQuotas(499, 1000, 59*time.Second)})
	tokensQuota := func(s *State) *costQuota {
		for i := range s.costs.quotas {
			if q := &s.costs.quotas[i]; s.costs.units[q.unit].name == "tokens" {
				return q
			}
		}
		t.Fatal("no tokens quota")
		return nil
	}
	rate := func(s *State) float64 { return tokensQuota(s).rate * 1e9 }
	if r := rate(&s); r < 999.9 || r > 1000 {
		t.Fatalf("rate %.2f a second, want 1000 less a token over 59s", r)
	}
	var x Lease
	x.SetCost(Cost{Tokens: 1000})
	if _, ok := s.Acquire(t0.Add(time.Second), cfg, Ask{}, &x); !ok {
		t.Fatal("1000 tokens a second on: not granted")
	}
	// Refused: 990 left by the server's count, under the 1000 asked,
	// whole in 59s (rounded to the second): (60000-990-1)/(59s+1s).
	s.Release(t0.Add(time.Second+time.Millisecond), cfg, &x, &Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
		Quotas: openAIQuotas(498, 990, 59*time.Second), Refusal: Refusal{Retryable: true, MaxWait: time.Minute}})
	want := 59009.0 / 60
	if r := rate(&s); r < want-0.01 || r > want+0.01 {
		t.Fatalf("rate after the refusal %.2f a second, want %.2f", r, want)
	}
	back := roundTripState(t, &s, "floored")
	if r := rate(back); r != rate(&s) || !tokensQuota(back).floored {
		t.Fatalf("decoded: rate %.2f, floored %v; want %.2f, floored", r, tokensQuota(back).floored, rate(&s))
	}
	// An answer whose estimate as stated (59001/59s, 1000) is above the
	// rate kept, but whose floor (59001/60s) is not: the rate stays.
	var y Lease
	y.SetCost(Cost{Tokens: 1})
	s.Acquire(t0.Add(2*time.Second), cfg, Ask{}, &y)
	s.Release(t0.Add(2*time.Second), cfg, &y, &Outcome{First: true, Bytes: -1, Quotas: openAIQuotas(497, 998, 59*time.Second)})
	if r := rate(&s); r < want-0.01 || r > want+0.01 {
		t.Errorf("rate after an answer stating 998 whole in 59s: %.2f a second, want %.2f kept", r, want)
	}
}
