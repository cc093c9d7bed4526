package controltest

import (
	"fmt"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// quotaWait is a refusal whose spent quota resets after d.
func quotaWait(d time.Duration) control.Refusal {
	return control.Refusal{Wait: d, Given: true, Reason: control.ReasonQuota, Retryable: true, MaxWait: 10 * time.Minute}
}

// plan is a refusal plan that retries.
func plan(wait, pause time.Duration, why control.Reason) *control.Plan {
	return &control.Plan{Wait: wait, Pause: pause, Reason: why, Retry: true}
}

// robustTables are the rules that keep a key safe from servers that state
// waits too short, resets already past, and from retries that would
// otherwise be dropped.
func robustTables() []Table {
	return []Table{
		{Name: "refusal floor", Steps: []Step{
			// Retry-After: 0 is no invitation to resend at once: the
			// floor, a second (jitter 0 from Rand 0).
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", refused(retryAfter(0)), Want{Plan: plan(s, s, control.ReasonBackoff), PauseUntil: s, PauseReason: control.ReasonBackoff}),
			acq(500*ms, "x", Want{Hold: control.ReasonBackoff, Until: s}),
			// Each refusal in a row that gives a wait below the floor
			// doubles it.
			acq(s, "a", Want{Grant: true, Probe: true}),
			rel(s, "a", refused(retryAfter(0)), Want{Plan: plan(2*s, 2*s, control.ReasonBackoff), PauseUntil: 3 * s}),
			acq(3*s, "b", Want{Grant: true, Probe: true}),
			rel(3*s, "b", refused(retryAfter(300*ms)), Want{Plan: plan(2*s, 2*s, control.ReasonBackoff), PauseUntil: 5 * s}),
			// An acceptance ends the streak; a positive wait below the
			// floor, of a field of finer grain, is then honoured once.
			acq(5*s, "c", Want{Grant: true, Probe: true}),
			rel(5*s, "c", ok(), Want{}),
			acq(5*s, "d", Want{Grant: true}),
			rel(5*s, "d", refused(retryAfter(300*ms)), Want{Plan: plan(300*ms, 300*ms, control.ReasonRetryAfter), PauseUntil: 5300 * ms}),
			acq(5300*ms, "e", Want{Grant: true, Probe: true}),
			rel(5300*ms, "e", refused(retryAfter(300*ms)), Want{Plan: plan(s, s, control.ReasonBackoff), PauseUntil: 6300 * ms}),
		}},
		{Name: "reset already past on a refusal", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(20, 0, 19, 1500*ms)), Want{}),
			acq(0, "a", Want{Grant: true}),
			// Refused while the reset is now (rounded down to the
			// second the server is in): unknown, not now.
			// (The floor's wait is lengthened by up to a quarter.)
			rel(0, "a", refused(quotaWait(0), rl(20, 0, 0, 0)), Want{PauseReason: control.ReasonBackoff}),
			acq(900*ms, "x", Want{Hold: control.ReasonBackoff}),
			// The server states its resets early: the key reads them a
			// second later from now on.
			acq(1500*ms, "b", Want{Grant: true, Probe: true}),
			rel(1500*ms, "b", ok(rl(20, 0, 0, 1500*ms)), Want{PauseUntil: 4 * s, PauseReason: control.ReasonQuota}),
		}},
		{Name: "retry budget spaces retries out", Steps: []Step{
			// A floor of 2 retries (refilled at 2 a second), plus a
			// fifth of first attempts; a retry spends one.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(100, 60*s, 90, 60*s)), Want{}),
			acq(0, "a", Want{Grant: true}),
			acq(0, "b", Want{Grant: true}),
			acq(0, "c", Want{Grant: true}),
			acq(0, "d", Want{Grant: true}),
			rel(0, "a", refused(bare(100*ms)), Want{Plan: plan(100*ms, 100*ms, control.ReasonBackoff)}),
			rel(0, "b", refused(bare(100*ms)), Want{Plan: plan(100*ms, 100*ms, control.ReasonBackoff)}),
			rel(0, "c", refused(bare(100*ms)), Want{Plan: plan(100*ms, 100*ms, control.ReasonBackoff)}),
			// The budget is spent: d's retry waits until a token came
			// back, half a second, instead of being dropped. The key's
			// pause stays the backoff's.
			rel(0, "d", refused(bare(100*ms)), Want{Plan: plan(500*ms, 100*ms, control.ReasonRetryBudget), PauseUntil: 100 * ms}),
			{At: 100 * ms, Acquire: "d2", After: 500 * ms, Want: Want{Hold: control.ReasonRetryBudget, Until: 500 * ms}},
			{At: 500 * ms, Acquire: "d3", After: 500 * ms, Want: Want{Grant: true, Probe: true}},
		}},
		outageTable(),
		{Name: "slow origin ramps as fast as a hinted key", Steps: []Step{
			// A key that states nothing, whose answers take 300ms: the
			// ramp opens at 4 and adds two per answer.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(300*ms, "p", ok(), Want{}),
			acq(300*ms, "a", Want{Grant: true}),
			acq(300*ms, "b", Want{Grant: true}),
			acq(300*ms, "c", Want{Grant: true}),
			acq(300*ms, "d", Want{Grant: true, InFlight: 4}),
			acq(300*ms, "e", Want{Hold: control.ReasonConcurrency}),
			rel(600*ms, "a", ok(), Want{}),
			acq(600*ms, "f", Want{Grant: true}),
			acq(600*ms, "g", Want{Grant: true}),
			acq(600*ms, "h", Want{Grant: true, InFlight: 6}),
			acq(600*ms, "i", Want{Hold: control.ReasonConcurrency}),
		}},
		{Name: "a probe that does not answer lets another probe", Steps: []Step{
			// A cold key: its probe holds the others 3s at most.
			acq(0, "p", Want{Grant: true, Probe: true}),
			acq(s, "x", Want{Hold: control.ReasonProbe, Wake: 3 * s}),
			// Then another request probes, and holds them twice as long.
			acq(3*s, "q", Want{Grant: true, Probe: true, InFlight: 2}),
			acq(3*s, "y", Want{Hold: control.ReasonProbe, Wake: 9 * s}),
			// Its answer opens the key; the first probe's, later, is
			// read as any answer.
			rel(3100*ms, "q", ok(), Want{Probing: -1}),
			acq(3100*ms, "a", Want{Grant: true}),
			rel(10*s, "p", ok(), Want{InFlight: 1}),
			// A warm key's probe holds the others four of its round
			// trips, when that is longer than 3s: smoothed by an eighth,
			// 100ms, then 9.9s, then a's 6.9s make 2.0328125s.
			rel(10*s, "a", refused(retryAfter(2*s)), Want{PauseUntil: 12 * s}),
			acq(12*s, "b", Want{Grant: true, Probe: true}),
			acq(12*s, "z", Want{Hold: control.ReasonProbe, Wake: 12*s + 4*2032812500*time.Nanosecond}),
		}},
	}
}

// outageTable refuses a key's probes 40 times in a row, then once more:
// an outage, where the retry budget drops the retries it cannot afford.
// One acceptance ends it.
func outageTable() Table {
	const step = 100 * ms
	var steps []Step
	at := time.Duration(0)
	for i := range 41 {
		name := fmt.Sprintf("r%d", i)
		steps = append(steps,
			acq(at, name, Want{Grant: true, Probe: true}),
			rel(at, name, refused(bare(step)), Want{}))
		at += step
	}
	steps[len(steps)-1].Want.Plan = &control.Plan{Wait: step, Pause: step, Reason: control.ReasonBackoff, Denied: control.ReasonRetryBudget}
	steps = append(steps,
		acq(at, "ok", Want{Grant: true, Probe: true}),
		rel(at, "ok", ok(), Want{}),
		// The budget is still 19 retries in debt (it can owe 20):
		// the next refusal's retry waits 10s until one is back, and
		// is not dropped.
		acq(at, "again", Want{Grant: true}),
		rel(at, "again", refused(bare(step)), Want{Plan: plan(10*s, step, control.ReasonRetryBudget)}),
	)
	return Table{Name: "outage drops retries", Steps: steps}
}
