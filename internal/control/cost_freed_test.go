package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A unit replaced drops its quotas at the end of the answer that replaced
// it: left "free" (name "", no partition, the new unit's index), they were
// the identity of a nameless quota of the new unit (as OpenAI's are), the
// tokens quota was held twice, one copy frozen, and View listed policies
// no server stated.
func TestReplacedUnitQuotasDropped(t *testing.T) {
	var others []parse.Quota
	for _, u := range []string{"points", "points", "credits", "images", "seconds"} {
		others = append(others, parse.Quota{Policy: u + string(rune('0'+len(others))), Unit: u, Limit: 1 << 30, Window: time.Minute, Remaining: 1 << 30, Reset: time.Minute, Dialect: "ietf"})
	}
	tokens := func(left int64) []parse.Quota {
		return []parse.Quota{{Unit: "tokens", Limit: 10000, Remaining: left, Reset: 30 * time.Second, Dialect: "openai"}}
	}
	tok := Cost{Tokens: 1000}
	s1 := time.Second
	var s State
	runFSteps(t, &s, &Config{}, []fstep{
		{0, 'a', "P", Cost{}, nil, ReasonNone},
		{s1, 'r', "P", Cost{}, others, ReasonNone},
		{2 * s1, 'a', "A", tok, nil, ReasonNone},
		{3 * s1, 'r', "A", tok, tokens(9000), ReasonNone},
		{4 * s1, 'a', "B", tok, nil, ReasonNone},
		{5 * s1, 'r', "B", tok, tokens(3000), ReasonNone},
	})
	n := 0
	for _, p := range s.View(t0.Add(6 * s1)).Policies {
		t.Logf("%q %s quota %d remaining %d stated %v", p.Name, p.Unit, p.Quota, p.Remaining, p.Stated.Sub(t0))
		if p.Unit == "tokens" || p.Name == "" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("View lists %d quotas named \"\" (or of tokens), want 1: the one tokens quota the server states", n)
	}
}
