package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A request rejected with a 429 was charged its cost when its refusal,
// stating the quota, answered a request granted before the quota's
// current observation: apply read it as an answer out of order and took
// the request's cost off the level, as if counted. Here an IETF server of
// 10,000 tokens a minute (and 100 requests) states both full; A (5000
// tokens) and then B (3000) are granted; B's answer states nothing
// (charged: 7000 left); A is rejected for the requests quota, stating
// 10,000 tokens left. The origin has 7000; the key read 2000, and A's
// retry waited the whole window for tokens it did not need.
func TestRefusalOutOfOrderCharged(t *testing.T) {
	var s State
	cfg := Config{}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	quotas := func(reqs, tokens int64) []parse.Quota {
		return []parse.Quota{
			{Policy: "rpm", Unit: "requests", Limit: 100, Window: time.Minute, Remaining: reqs, Reset: time.Minute},
			{Policy: "tpm", Unit: "tokens", Limit: 10000, Window: time.Minute, Remaining: tokens, Reset: time.Minute},
		}
	}
	// The probe, answered: the key states both quotas, full.
	var p Lease
	if _, ok := s.Acquire(now, &cfg, Ask{}, &p); !ok {
		t.Fatal("probe not granted")
	}
	s.Release(now, &cfg, &p, &Outcome{First: true, Bytes: -1, Served: true, Quotas: quotas(99, 10000)})
	var a, b Lease
	a.SetCost(Cost{Tokens: 5000})
	b.SetCost(Cost{Tokens: 3000})
	if _, ok := s.Acquire(now, &cfg, Ask{}, &a); !ok {
		t.Fatal("A not granted")
	}
	if _, ok := s.Acquire(now, &cfg, Ask{}, &b); !ok {
		t.Fatal("B not granted")
	}
	now = now.Add(100 * time.Millisecond)
	s.Release(now, &cfg, &b, &Outcome{First: true, Bytes: -1, Served: true}) // states nothing: charged
	tokens := func() int64 {
		for _, p := range s.View(now).Policies {
			if p.Unit == "tokens" {
				return p.Remaining
			}
		}
		return -1
	}
	t.Logf("after B's answer: key reads %d tokens, A's 5000 reserved (level %d)", tokens(), s.costs.quotas[0].r)
	now = now.Add(100 * time.Millisecond)
	s.Release(now, &cfg, &a, &Outcome{First: true, Bytes: -1, Refused: true, Rejected: true, Quotas: quotas(0, 10000),
		Refusal: Refusal{Wait: time.Second, Given: true, Reason: ReasonRetryAfter, Retryable: true, MaxWait: 10 * time.Minute}})
	got := tokens()
	t.Logf("after A's refusal: key reads %d tokens; the origin has 7000", got)
	if got < 7000 {
		t.Errorf("a refusal charged its cost: the key reads %d tokens left after A (5000) was refused, where the origin, which counted only B (3000), has 7000", got)
	}
}
