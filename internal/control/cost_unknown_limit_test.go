package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// fourThen: quotas of points, credits, images and seconds (loose, full),
// then last.
func fourThen(at time.Duration, last parse.Quota) []parse.Quota {
	var qs []parse.Quota
	for _, u := range []string{"points", "credits", "images", "seconds"} {
		qs = append(qs, parse.Quota{Policy: u, Unit: u, Limit: 1 << 30, Window: time.Minute, Remaining: 1 << 30, Reset: time.Minute - at, Dialect: "ietf"})
	}
	return append(qs, last)
}

// A tokens quota with none left whose limit the answer does not state
// (Limit -1, as parse gives when no limit is told) is spent, and needed:
// stated after four other units, it is read, and a tokens request waits,
// as without the four others (taken as needed only with its limit known,
// it went unread, and the request was sent into it).
func TestSpentTokensUnknownLimitRead(t *testing.T) {
	pts := Cost{Unit: "points", Amount: 1}
	tok := Cost{Tokens: 100}
	s1 := time.Second
	tq := parse.Quota{Policy: "tok", Unit: "tokens", Limit: -1, Remaining: 0, Reset: 50*time.Second - s1, Dialect: "ietf"}
	for _, four := range []bool{false, true} {
		name := "alone"
		qs := []parse.Quota{tq}
		if four {
			name, qs = "after-four-units", fourThen(s1, tq)
		}
		t.Run(name, func(t *testing.T) {
			var s State
			runFSteps(t, &s, &Config{}, []fstep{
				{0, 'a', "P", pts, nil, ReasonNone},
				{s1, 'r', "P", pts, qs, ReasonNone},
				{2 * s1, 'a', "T", tok, nil, ReasonQuota},
			})
		})
	}
}
