package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A bare 429 whose cost quota explains it (tokens left below the request's
// cost, reset already past) is a short wait the server gave: tokenRefusal
// makes it Given, Wait 0, but leaves Refusal.Backoff, which the Transport
// drew because the server gave no wait. Decide took max(spread(f),
// r.Backoff) for that floor, so the request, and its origin's pause,
// waited its own exponential backoff (12 s on a 4th attempt) where the
// floor is spread to 1-1.25 s at most (and Rand 0 gives the unspread 1 s).
func TestSpreadCostRefusalWaitsFloor(t *testing.T) {
	for _, backoff := range []time.Duration{1400 * time.Millisecond, 12 * time.Second} {
		var s State
		cfg := Config{}
		var l Lease
		l.SetCost(Cost{Tokens: 1000})
		if _, ok := s.Acquire(t0, &cfg, Ask{}, &l); !ok {
			t.Fatal("not granted")
		}
		p := s.Release(t0, &cfg, &l, &Outcome{First: true, Bytes: -1, Refused: true, Rand: 0,
			Quotas:  []parse.Quota{{Unit: "tokens", Limit: 10000, Remaining: 0, Reset: 0, Dialect: "openai"}},
			Refusal: Refusal{Backoff: backoff, Retryable: true, MaxWait: 10 * time.Minute}})
		if p.Wait > RefusalFloor*5/4 {
			t.Errorf("backoff %v, Rand 0: plan %+v: wait %v, want the floor %v (at most 1.25 s spread); the request's backoff is for a refusal that gave no wait", backoff, p, p.Wait, RefusalFloor)
		}
	}
}
