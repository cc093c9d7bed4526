package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// scaleAgainst runs requests one after another, each declaring 1000 input
// tokens, against a server that counts k times what is declared and states
// what is left exactly (every count here is a multiple of 1000), in the
// dialect given; it returns the scale learned.
func scaleAgainst(t *testing.T, dialect, unit string, k int64, rounds int) int64 {
	t.Helper()
	var s State
	cfg := Config{}
	const limit = 1_000_000
	level := int64(limit)
	q := func() []parse.Quota {
		return []parse.Quota{{Unit: unit, Limit: limit, Remaining: level, Reset: 60 * time.Second, Dialect: dialect}}
	}
	now := t0
	send := func(declared int64) {
		l := new(Lease)
		c := Cost{Tokens: declared}
		if unit == "input-tokens" {
			c = Cost{InputTokens: declared}
		}
		l.SetCost(c)
		if h, ok := s.Acquire(now, &cfg, Ask{}, l); !ok {
			t.Fatalf("held: %v until +%v", h.Reason, h.Until().Sub(now))
		}
		level -= k * declared
		s.Release(now, &cfg, l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: q()})
	}
	for range rounds {
		send(1000)
	}
	return s.costs.units[0].scale
}

// An Anthropic remaining that is a multiple of 1000 is read as 500 less
// (the level kept, see rounding), and learn compared that level with the
// remaining as stated: every sample of what the server counted was 500
// tokens short. A server counting twice what is declared (a scale of 1000)
// was learned as counting 1.5 times, from the same exact answers the
// OpenAI dialect learns 1000 from: the reservations held a quarter too
// little.
func TestRoundedScaleLearned(t *testing.T) {
	exact := scaleAgainst(t, "openai", "tokens", 2, 60)
	rounded := scaleAgainst(t, "anthropic", "input-tokens", 2, 60)
	t.Logf("scale learned: openai dialect %d, anthropic dialect %d (truth 1000)", exact, rounded)
	if rounded < 900 {
		t.Errorf("anthropic: scale %d thousandths after 60 answers of a server counting twice what is declared, want about 1000 (the OpenAI dialect, same counts: %d)", rounded, exact)
	}
}
