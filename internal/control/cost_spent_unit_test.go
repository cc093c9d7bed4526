package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// fourThenTokens: quotas of points, credits, images and seconds (loose,
// full) and then a tokens quota with none left until t0+50s.
func fourThenTokens(at time.Duration) []parse.Quota {
	var qs []parse.Quota
	for _, u := range []string{"points", "credits", "images", "seconds"} {
		qs = append(qs, parse.Quota{Policy: u, Unit: u, Limit: 1 << 30, Window: time.Minute, Remaining: 1 << 30, Reset: time.Minute - at, Dialect: "ietf"})
	}
	return append(qs, parse.Quota{Policy: "tok", Unit: "tokens", Limit: 10000, Window: time.Minute, Remaining: 0, Reset: 50*time.Second - at, Dialect: "ietf"})
}

// A request of points is answered with four other units then a tokens
// quota spent for 50 s. The next request declares 100 tokens, which the
// server stated it cannot pay for: it waits (a unit taken as needed only
// when the answered request declared it left the spent tokens quota
// unread, and the tokens request was sent).
func TestSpentTokensStatedToOtherUnitRequest(t *testing.T) {
	pts := Cost{Unit: "points", Amount: 1}
	tok := Cost{Tokens: 100}
	s1 := time.Second
	var s State
	runFSteps(t, &s, &Config{}, []fstep{
		{0, 'a', "P", pts, nil, ReasonNone},
		{s1, 'r', "P", pts, fourThenTokens(s1), ReasonNone},
		{2 * s1, 'a', "T", tok, nil, ReasonQuota}, // tokens: 0 left until +50s
	})
}
