package controltest

import (
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// Tables returns the controller's tables, one per rule of the package
// documentation.
func Tables() []Table { return append(append(tables(), costTables()...), turnTables()...) }

// openAI is an OpenAI observation of one unit: limit and remaining, and
// the time until the quota is whole again.
func openAI(unit string, limit, remaining int64, full time.Duration) parse.Quota {
	return parse.Quota{Unit: unit, Limit: limit, Remaining: remaining, Reset: full, Dialect: "openai"}
}

// anthropic is an Anthropic observation of one unit.
func anthropic(unit string, limit, remaining int64, full time.Duration) parse.Quota {
	return parse.Quota{Unit: unit, Limit: limit, Remaining: remaining, Reset: full, Dialect: "anthropic"}
}

// tokens is a cost of n tokens.
func tokens(n int64) control.Cost { return control.Cost{Tokens: n} }

// acqCost is an Acquire of a request costing c.
func acqCost(at time.Duration, name string, c control.Cost, w Want) Step {
	return Step{At: at, Acquire: name, Cost: c, Want: w}
}

// costTables are the rules of quotas in units other than requests: tokens
// and the like.
func costTables() []Table {
	// A quota of 6000 tokens a minute, refilled at 100 a second: the rate
	// is the limit less the remaining less one token (the fraction of the
	// next one), over the reset.
	probe := []Step{
		acqCost(0, "p", tokens(101), Want{Grant: true, Probe: true}),
		rel(s, "p", ok(openAI("requests", 1000, 999, 60*ms), openAI("tokens", 6000, 5899, s)), Want{}),
	}
	return []Table{
		{Name: "tokens: a request waits only for the tokens it lacks", Steps: append(probe[:2:2],
			acqCost(s, "a", tokens(3000), Want{Grant: true}),
			acqCost(s, "b", tokens(1999), Want{Grant: true}),
			// 900 left after a and b: c lacks 100, a second's refill.
			acqCost(s, "c", tokens(1000), Want{Hold: control.ReasonQuota, Until: 2 * s}),
			// A request that costs no tokens is not held by them.
			acqCost(s, "d", control.Cost{}, Want{Grant: true}),
			// a's answer says 950 left. b was sent after a: it may not
			// be counted in it, and its reservation still holds.
			rel(1500*ms, "a", ok(openAI("requests", 1000, 997, 180*ms), openAI("tokens", 6000, 950, 50500*ms)), Want{}),
			acqCost(1500*ms, "c", tokens(1000), Want{Hold: control.ReasonQuota, Until: 21990 * ms}),
			// b's answer counts b: 1000 left.
			rel(2*s, "b", ok(openAI("requests", 1000, 996, 240*ms), openAI("tokens", 6000, 1000, 50*s)), Want{}),
			acqCost(2*s, "c", tokens(1000), Want{Grant: true}),
			rel(2200*ms, "c", ok(openAI("requests", 1000, 996, 240*ms), openAI("tokens", 6000, 20, 59800*ms)), Want{}),
			acqCost(2200*ms, "e", tokens(500), Want{Hold: control.ReasonQuota, Until: 7 * s}),
			// d was sent before c, and its answer came back after c's
			// saying more than c's has refilled to since: it may have
			// been written before, and overtaken on the way. Ignored.
			rel(2700*ms, "d", ok(openAI("requests", 1000, 996, 240*ms), openAI("tokens", 6000, 1000, 50*s)), Want{}),
			acqCost(2700*ms, "e", tokens(500), Want{Hold: control.ReasonQuota, Until: 7 * s}),
			acqCost(7*s, "e", tokens(500), Want{Grant: true}),
			// e's answer, the latest, is news: 1000 left (the server
			// refunded output not produced, say).
			rel(7500*ms, "e", ok(openAI("requests", 1000, 996, 240*ms), openAI("tokens", 6000, 1000, 50*s)), Want{}),
			acqCost(7500*ms, "f", tokens(1000), Want{Grant: true}),
		)},
		{Name: "tokens: requests granted since the observation reserve their cost", Steps: append(probe[:2:2],
			acqCost(s, "a", tokens(3000), Want{Grant: true}),
			acqCost(s, "b", tokens(2899), Want{Grant: true}),
			acqCost(s, "c", tokens(1), Want{Hold: control.ReasonQuota, Until: s + 10*ms}),
			// a fails without an answer: the server may have counted it,
			// so its cost moves from its reservation to the observation.
			rel(s, "a", control.Outcome{Failed: true}, Want{}),
			acqCost(s, "c", tokens(1), Want{Hold: control.ReasonQuota, Until: s + 10*ms}),
		)},
		{Name: "tokens: a cost beyond the whole quota never starts", Steps: append(probe[:2:2],
			acqCost(s, "a", tokens(6001), Want{Hold: control.ReasonQuota, Excess: "tokens"}),
			acqCost(s, "b", control.Cost{InputTokens: 3000, OutputTokens: 3001}, Want{Hold: control.ReasonQuota, Excess: "tokens"}),
			acqCost(s, "c", tokens(6000), Want{Hold: control.ReasonQuota, Until: 2010 * ms}),
			acqCost(2010*ms, "c", tokens(6000), Want{Grant: true}),
		)},
		{Name: "tokens: a refusal on tokens is foreseen, and waits for the tokens the request lacks", Steps: append(probe[:2:2],
			acqCost(s, "a", tokens(5000), Want{Grant: true}),
			// Another client took the tokens: 910 left, requests to spare,
			// no Retry-After. The wait is what a lacks, at 100 a second,
			// not the bare backoff nor the time to a whole quota; and the
			// hints are not distrusted.
			rel(1100*ms, "a", refused(bare(s), openAI("requests", 1000, 998, 120*ms), openAI("tokens", 6000, 910, 50900*ms)),
				Want{Plan: &control.Plan{Wait: 40900 * ms, Pause: 40900 * ms, Reason: control.ReasonQuota, Retry: true}, PauseUntil: 42 * s}),
			acqCost(42*s, "a", tokens(5000), Want{Grant: true, Probe: true}),
		)},
		{Name: "tokens: a refusal with room for the estimate: the server counted more", Steps: append(probe[:2:2],
			acqCost(s, "a", tokens(1000), Want{Grant: true}),
			// 1500 left, more than the 1000 estimated: the server counted
			// more. Not a lie; the retry waits as if a cost 2000, and
			// asks for more room (Short).
			rel(1100*ms, "a", refused(bare(s), openAI("requests", 1000, 998, 120*ms), openAI("tokens", 6000, 1500, 45*s)),
				Want{Plan: &control.Plan{Wait: 5 * s, Pause: 5 * s, Reason: control.ReasonQuota, Retry: true, Short: true}, PauseUntil: 6100 * ms}),
		)},
		{Name: "tokens: a refusal with room for the cost raises what later requests reserve", Steps: append(probe[:2:2],
			acqCost(s, "a", tokens(1000), Want{Grant: true}),
			// The server counted more than the 1500 it states left: at
			// least 1501 for a cost of 1000, half as much again and a
			// little more (a scale of 501), which the scale of none fell
			// short of by 501: the scale is raised past the bound by as
			// much, to 1002, and a cost declared now reserves that and a
			// quarter of it as a margin: 1500 reserves 3378.
			rel(1100*ms, "a", refused(bare(s), openAI("requests", 1000, 998, 120*ms), openAI("tokens", 6000, 1500, 45*s)),
				Want{Plan: &control.Plan{Wait: 5 * s, Pause: 5 * s, Reason: control.ReasonQuota, Retry: true, Short: true}, PauseUntil: 6100 * ms}),
			// 2000 left at 6.1 s: 1378 lacking, 13.78 s of refill.
			acqCost(6100*ms, "b", tokens(1500), Want{Hold: control.ReasonQuota, Until: 19880 * ms}),
			acqCost(19880*ms, "b", tokens(1500), Want{Grant: true, Probe: true}),
		)},
		{Name: "tokens: an answer stating less than foreseen raises what later requests reserve", Steps: append(probe[:2:2],
			acqCost(s, "a", tokens(1000), Want{Grant: true}),
			// 5999 foreseen at 2 s less a's 1000: 4999. The server states
			// 4499: it counted 1500. The scale moves a quarter of the way
			// to the half more seen, an eighth, and a cost declared now
			// reserves that and a quarter of it as a margin: 15.6% more.
			rel(2*s, "a", ok(openAI("requests", 1000, 998, 120*ms), openAI("tokens", 6000, 4499, 15010*ms)), Want{}),
			// 4400 reserves 5087: 588 lacking, 5.88 s of refill.
			acqCost(2*s, "b", tokens(4400), Want{Hold: control.ReasonQuota, Until: 7880 * ms}),
			// A cost of input and output tokens: the scale is of the
			// input alone (the output bound is what the server counts).
			// 4480 tokens, 400 of input, reserve 4543: 44 lacking.
			acqCost(2*s, "c", control.Cost{Tokens: 4480, InputTokens: 400, OutputTokens: 4080}, Want{Hold: control.ReasonQuota, Until: 2440 * ms}),
			acqCost(7880*ms, "b", tokens(4400), Want{Grant: true}),
		)},
		{Name: "tokens: a cost the server accepted beyond its limit waits for the whole quota, until refused", Steps: []Step{
			// The limit unknown, a request estimated at 8000 goes; the
			// server counted it less (an estimate of prose runs a third
			// over), and states a limit of 6000, spent, whole in 60 s.
			acqCost(0, "p", tokens(8000), Want{Grant: true, Probe: true}),
			rel(s, "p", ok(openAI("requests", 1000, 999, 60*ms), openAI("tokens", 6000, 0, 59990*ms)), Want{}),
			// The same request again is no CostError: it waits for the
			// whole quota, 60 s at 100 a second.
			acqCost(s, "a", tokens(8000), Want{Hold: control.ReasonQuota, Until: 61 * s}),
			acqCost(61*s, "a", tokens(8000), Want{Grant: true}),
			// Refused: so large a cost no longer counts as one that fits,
			// and fails at once. A smaller one, 7000, may: the server
			// said nothing of it; it waits out the refusal's pause.
			rel(61100*ms, "a", refused(bare(s), openAI("requests", 1000, 998, 120*ms), openAI("tokens", 6000, 6000, 0)), Want{}),
			acqCost(61100*ms, "b", tokens(8000), Want{Hold: control.ReasonQuota, Excess: "tokens"}),
			acqCost(61100*ms, "c", tokens(7000), Want{Hold: control.ReasonBackoff}),
		}},
		{Name: "tokens: a spent token quota waits for this request, not for the whole quota", Steps: append(probe[:2:2],
			acqCost(s, "a", tokens(200), Want{Grant: true}),
			// The Transport took the time to a whole quota as the wait
			// of the spent quota; the request needs 200 tokens, 2 s.
			rel(1100*ms, "a", refused(control.Refusal{Wait: 60 * s, Given: true, Reason: control.ReasonQuota, Retryable: true, MaxWait: 10 * time.Minute},
				openAI("requests", 1000, 998, 120*ms), openAI("tokens", 6000, 0, 60*s)),
				Want{Plan: &control.Plan{Wait: 2 * s, Pause: 2 * s, Reason: control.ReasonQuota, Retry: true}}),
		)},
		{Name: "tokens: Anthropic's input and output quotas, each charged apart", Steps: []Step{
			acqCost(0, "p", control.Cost{InputTokens: 101, OutputTokens: 101}, Want{Grant: true, Probe: true}),
			// 3000 input and 1200 output tokens a minute: 50 and 20 a
			// second. The tokens quota Anthropic states beside them is
			// their sum, and is not charged. The answer has no Date: it
			// may have been written as p was granted, a second before it
			// came, and its resets, instants measured from its arrival,
			// count that second too: 33 and 16.7 a second.
			rel(s, "p", ok(anthropic("requests", 50, 49, s), anthropic("input-tokens", 3000, 2899, 2*s),
				anthropic("output-tokens", 1200, 1099, 5*s), anthropic("tokens", 4200, 3998, 5*s)), Want{}),
			acqCost(s, "a", control.Cost{InputTokens: 1999, OutputTokens: 999}, Want{Grant: true}),
			// 900 input tokens and 100 output tokens left: b lacks 100 of
			// each, 3 s of input and 6 s of output.
			acqCost(s, "b", control.Cost{InputTokens: 1000, OutputTokens: 200}, Want{Hold: control.ReasonQuota, Until: 7 * s}),
			acqCost(s, "c", control.Cost{InputTokens: 900, OutputTokens: 100}, Want{Grant: true}),
			acqCost(s, "d", control.Cost{InputTokens: 1, OutputTokens: 1201}, Want{Hold: control.ReasonQuota, Excess: "output-tokens"}),
		}},
		{Name: "tokens: a quota restored whole at its reset", Steps: []Step{
			acqCost(0, "p", tokens(100), Want{Grant: true, Probe: true}),
			rel(s, "p", ok(ietfTokens(900, 9*s)), Want{}),
			acqCost(s, "a", tokens(800), Want{Grant: true}),
			acqCost(s, "b", tokens(100), Want{Grant: true}),
			acqCost(s, "c", tokens(100), Want{Hold: control.ReasonQuota, Until: 10 * s}),
			rel(2*s, "a", ok(ietfTokens(0, 8*s)), Want{}),
			acqCost(2*s, "c", tokens(100), Want{Hold: control.ReasonQuota, Until: 10 * s}),
			rel(2500*ms, "b", ok(ietfTokens(0, 7500*ms)), Want{}),
			// Not taken for whole again at the reset (draft-11 §4.1.2:
			// a token bucket's t is when some is back): stale, the
			// quota is probed, one request at a time until an answer.
			acqCost(10*s, "c", tokens(100), Want{Grant: true, Probe: true}),
			acqCost(10*s, "d", tokens(900), Want{Hold: control.ReasonProbe, Wake: 14250 * ms}),
			// c's answer tells the window was restored whole.
			rel(10500*ms, "c", ok(ietfTokens(900, 9500*ms)), Want{}),
			acqCost(10500*ms, "d", tokens(900), Want{Grant: true}),
			acqCost(10500*ms, "e", tokens(1), Want{Hold: control.ReasonQuota, Until: 20 * s}),
			rel(11*s, "d", ok(ietfTokens(0, 9*s)), Want{}),
			acqCost(11*s, "f", tokens(1), Want{Hold: control.ReasonQuota, Until: 20 * s}),
		}},
	}
}

// ietfTokens is a RateLimit observation of a quota of 1000 tokens per 10 s.
func ietfTokens(r int64, t time.Duration) parse.Quota {
	return parse.Quota{Policy: "t", Unit: "tokens", Limit: 1000, Window: 10 * s, Remaining: r, Reset: t, Dialect: "ietf"}
}
