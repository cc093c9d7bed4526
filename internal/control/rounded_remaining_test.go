package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// Anthropic rounds the tokens left to the nearest thousand: a stated 5000
// stands for 4500 to 5499. It was read as exact, and a request of 4900
// went at once into the 4600 the server held, to be refused. It is read
// now as the least it stands for, and its refill rate, the tokens
// missing over the time to full, from the most, each the side of fewer
// tokens. Here 30,000 input tokens, 5000 stated left, full in 50 s: at
// most 24,999 missing, 490 a second.
func TestRoundedRemaining(t *testing.T) {
	for _, tt := range []struct {
		stated int64         // the remaining the answer states
		after  time.Duration // when the request asks, after the answer
		cost   int64         // its input tokens
		want   bool          // granted
	}{
		{5000, 0, 4900, false}, // 4500 at the least
		{5000, 0, 4500, true},
		{4600, 0, 4600, true},                // not a multiple of 1000: not rounded
		{5000, 2 * time.Second, 5400, true},  // 4500 + 2 × 490
		{5000, 2 * time.Second, 5500, false}, // at 510 a second, from the least, it went
		{0, 0, 1, false},
	} {
		var s State
		cfg := Config{}
		var p Lease
		if _, ok := s.Acquire(t0, &cfg, Ask{}, &p); !ok {
			t.Fatal("probe not granted")
		}
		s.Release(t0, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: []parse.Quota{
			{Unit: "input-tokens", Limit: 30000, Remaining: tt.stated, Reset: 50 * time.Second, Dialect: "anthropic"},
		}})
		var l Lease
		l.SetCost(Cost{InputTokens: tt.cost})
		if _, ok := s.Acquire(t0.Add(tt.after), &cfg, Ask{}, &l); ok != tt.want {
			t.Errorf("%d stated, %d asked %v after: granted %v, want %v", tt.stated, tt.cost, tt.after, ok, tt.want)
		}
	}
}

// A refusal stating a rounded count waits for the tokens the request
// lacks from the least it stands for: 1000 stated is 500 at the least, and
// a request of 1200 lacks 700, about 1.5 s at 475 a second. From the
// count as stated it lacked 200, waited 0.4 s, and was refused again.
func TestRoundedRemainingRefusalWait(t *testing.T) {
	var s State
	cfg := Config{}
	in := func(r int64, reset time.Duration) []parse.Quota {
		return []parse.Quota{{Unit: "input-tokens", Limit: 30000, Remaining: r, Reset: reset, Dialect: "anthropic"}}
	}
	var p Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &p); !ok {
		t.Fatal("probe not granted")
	}
	s.Release(t0, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: in(20000, 20*time.Second)}) // 475 a second, from 20500
	var l Lease
	l.SetCost(Cost{InputTokens: 1200})
	now := t0.Add(time.Second)
	if _, ok := s.Acquire(now, &cfg, Ask{}, &l); !ok {
		t.Fatal("request not granted")
	}
	plan := s.Release(now, &cfg, &l, &Outcome{First: true, Bytes: -1, Refused: true, Quotas: in(1000, 60*time.Second),
		Refusal: Refusal{Retryable: true, MaxWait: time.Hour}})
	if plan.Wait < 1400*time.Millisecond || plan.Wait > 1600*time.Millisecond {
		t.Errorf("refused with 1000 stated left: waits %v, want about 1.5s for the 700 tokens lacking from the 500 at the least", plan.Wait)
	}
}
