package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// openAITokens is an OpenAI answer stating its quota of tokens.
func openAITokens(limit, left int64, reset time.Duration) []parse.Quota {
	return []parse.Quota{{Unit: "tokens", Limit: limit, Remaining: left, Reset: reset, Dialect: "openai"}}
}

// A refusal of a request whose cost is within the limit, refused for
// what another client left, is no refusal of a cost above the limit,
// even when the key's scale holds it above. costs.refusal compared the
// scaled cost with the limit and forgot that the server had accepted a
// cost of 12,500 against 10,000 (PolicyState.Accepted): that request
// failed at once with a CostError from then on, the harm DESIGN.md §10
// ("A request that never fits") keeps Accepted for.
func TestRefusalWithinLimitKeepsAccepted(t *testing.T) {
	var s State
	cfg := Config{}
	now := t0
	acquire := func(cost int64) *Lease {
		t.Helper()
		l := new(Lease)
		l.SetCost(Cost{Tokens: cost, InputTokens: cost})
		if h, ok := s.Acquire(now, &cfg, Ask{}, l); !ok {
			t.Fatalf("request of %d held: %v", cost, h.Reason)
		}
		return l
	}
	// A request estimated at 12,500 is accepted: the server counted
	// 1,000 of it (images estimated at 1,600 each, counted at 85).
	big := acquire(12500)
	s.Release(now, &cfg, big, &Outcome{First: true, Served: true, Bytes: -1, Quotas: openAITokens(10000, 9000, 6*time.Second)})
	if ex := s.Excess(now, &Cost{Tokens: 12500, InputTokens: 12500}); ex.Unit != "" {
		t.Fatalf("12,500 beyond %+v right after the server accepted it", ex)
	}
	// A request of 2,000 refused with 3,000 stated left: the server
	// counts prompts of text more than declared, and the scale rises.
	now = now.Add(time.Minute)
	c := acquire(2000)
	s.Release(now, &cfg, c, &Outcome{First: true, Refused: true, Rejected: true, Bytes: -1, Quotas: openAITokens(10000, 3000, 42*time.Second)})
	if sc := s.costs.units[0].scale; sc <= 0 {
		t.Fatalf("scale %d after the refusal, want raised", sc)
	}
	// A request of 9,000, within the limit, refused because another
	// client left 3,000; the scale holds it above 10,000.
	now = now.Add(time.Minute)
	b := acquire(9000)
	if need := s.costs.needIn("tokens", &b.want); need <= 10000 {
		t.Fatalf("the scale holds 9,000 as %d, want above the limit for the case tested", need)
	}
	s.Release(now, &cfg, b, &Outcome{First: true, Refused: true, Rejected: true, Bytes: -1, Quotas: openAITokens(10000, 3000, 42*time.Second)})
	if ex := s.Excess(now, &Cost{Tokens: 12500, InputTokens: 12500}); ex.Unit != "" {
		t.Errorf("after a refusal of a request of 9,000 within the limit, 12,500 tokens exceed %s (limit %d, accepted now %d): the server accepted 12,500 and refused nothing so large",
			ex.Unit, ex.Limit, s.costs.units[0].fits)
	}
	if ex := s.Excess(now, &Cost{Tokens: 9000, InputTokens: 9000}); ex.Unit != "" {
		t.Errorf("9,000 tokens exceed %+v after its refusal for what was left", ex)
	}
}
