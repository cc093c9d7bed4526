package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// Plan.Short (and with it Ask.Grow, which makes the retry wait for room
// for twice its cost) is meant for a refusal that shows the server counted
// the request as more than a cost quota's stated room. costs.refusal set
// it for any refusal whose tokens quota had room for the cost, not twice
// over, including refusals that show nothing of the kind, which
// learnRefused rightly learns nothing from (it is set by learnRefusal
// now):
//
//   - a 429 that OpenAI's spent quota of requests explains (0 requests
//     left);
//   - a 503 (Outcome.Unavailable), the service overloaded, which "says
//     nothing of what the request cost" (state.go skips learnRefusal).
//
// The retry, asked as the Transport asks it (Grow 1 when Short), was then
// held past the end of its plan's wait and the key's pause, though the
// quota has room for its cost then: 2,500 tokens, 1,000 reserved by a
// request in flight, for a cost of 1,000 (asked with Grow 0 it is
// granted then).
func TestShortOnlyWhenTheServerCountedMore(t *testing.T) {
	cost := Cost{Tokens: 1000, InputTokens: 1000}
	quotas := func(reqLeft, tokLeft int64, reqReset, tokReset time.Duration) []parse.Quota {
		return []parse.Quota{
			{Unit: "requests", Limit: 60, Remaining: reqLeft, Reset: reqReset, Dialect: "openai"},
			{Unit: "tokens", Limit: 60000, Remaining: tokLeft, Reset: tokReset, Dialect: "openai"},
		}
	}
	for _, tc := range []struct {
		name string
		out  Outcome
	}{
		{"429, requests quota spent", Outcome{First: true, Refused: true, Rejected: true, Bytes: -1,
			Refusal: Refusal{Retryable: true, MaxWait: time.Minute, Wait: time.Second, Given: true, Reason: ReasonQuota},
			Quotas:  quotas(0, 1500, time.Second, 58500*time.Millisecond)}},
		{"503", Outcome{First: true, Refused: true, Unavailable: true, Bytes: -1,
			Refusal: Refusal{Retryable: true, MaxWait: time.Minute, Wait: time.Second, Given: true, Reason: ReasonRetryAfter},
			Quotas:  quotas(20, 1500, 40*time.Second, 58500*time.Millisecond)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{}
			var s State
			acquire := func(now time.Time, ask Ask) (*Lease, Hold, bool) {
				l := new(Lease)
				l.SetCost(cost)
				h, ok := s.Acquire(now, &cfg, ask, l)
				return l, h, ok
			}
			// An answer teaches both quotas: 60 requests and 60,000
			// tokens a minute (1,000 tokens a second).
			first, _, ok := acquire(t0, Ask{})
			if !ok {
				t.Fatal("first request held")
			}
			s.Release(t0, &cfg, first, &Outcome{First: true, Served: true, Bytes: -1, Quotas: quotas(30, 30000, 30*time.Second, 30*time.Second)})

			now := t0.Add(time.Second)
			refused, _, ok := acquire(now, Ask{})
			if !ok {
				t.Fatal("request to refuse held")
			}
			if _, _, ok := acquire(now, Ask{}); !ok { // in flight, granted after it: reserves 1,000
				t.Fatal("other request held")
			}
			out := tc.out
			plan := s.Release(now, &cfg, refused, &out)
			if !plan.Retry {
				t.Fatalf("plan %+v, want a retry", plan)
			}
			if sc := s.costs.units[0].scale; sc != 0 {
				t.Fatalf("scale %d, want none learned from this refusal", sc)
			}
			if plan.Short {
				t.Errorf("plan %+v: Short, though the refusal shows nothing of how the server counted the request (the scale learned nothing)", plan)
			}
			ask := Ask{After: now.Add(plan.Wait), AfterReason: plan.Reason, First: now}
			if plan.Short {
				ask.Grow = 1
			}
			at := now.Add(max(plan.Wait, plan.Pause))
			if _, h, ok := acquire(at, ask); !ok {
				t.Errorf("retry (Grow %d) held at %v after its refusal, for %v until %v, with room for its cost", ask.Grow, at.Sub(now), h.Reason, h.Until().Sub(now))
			}
		})
	}
}
