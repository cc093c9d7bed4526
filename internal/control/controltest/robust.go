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
		// A refusal that gives no wait pauses the key for the request's
		// own backoff or the floor doubled for the key's refusals in a
		// row, whichever is longer: requests sent anew do not each start
		// again at a second. An acceptance ends the streak. Before, each
		// pause was the request's own backoff (here a second), and a
		// refusing key was probed every second until an outage.
		{Name: "refusals that give no wait double the key's pause", Steps: []Step{
			acq(0, "a", Want{Grant: true, Probe: true}),
			rel(0, "a", refused(bare(s)), Want{Plan: plan(s, s, control.ReasonBackoff), PauseUntil: s, PauseReason: control.ReasonBackoff}),
			acq(s, "b", Want{Grant: true, Probe: true}),
			rel(s, "b", refused(bare(s)), Want{Plan: plan(2*s, 2*s, control.ReasonBackoff), PauseUntil: 3 * s}),
			acq(3*s, "c", Want{Grant: true, Probe: true}),
			rel(3*s, "c", refused(bare(s)), Want{Plan: plan(4*s, 4*s, control.ReasonBackoff), PauseUntil: 7 * s}),
			acq(6*s, "x", Want{Hold: control.ReasonBackoff, Until: 7 * s}),
			// The request's own backoff, when longer, is its wait.
			acq(7*s, "d", Want{Grant: true, Probe: true}),
			rel(7*s, "d", refused(bare(20*s)), Want{Plan: plan(20*s, 20*s, control.ReasonBackoff), PauseUntil: 27 * s}),
			acq(27*s, "e", Want{Grant: true, Probe: true}),
			rel(27*s, "e", ok(), Want{}),
			acq(27*s, "f", Want{Grant: true}),
			rel(27*s, "f", refused(bare(s)), Want{Plan: plan(s, s, control.ReasonBackoff), PauseUntil: 28 * s}),
		}},
		// In an outage (40 refused flights, no acceptance), a refusal
		// that gives no wait goes back to the caller, and pauses the key
		// as before, doubled up to a minute.
		{Name: "an outage's refusals that give no wait go back", Steps: append(refusedInRow(40),
			acq(2103*s, "o1", Want{Grant: true, Probe: true}),
			rel(2103*s, "o1", refused(bare(s)), Want{Plan: &control.Plan{Wait: time.Minute, Pause: time.Minute, Reason: control.ReasonBackoff, Denied: control.ReasonRetryBudget}, PauseUntil: 2163 * s}),
			acq(2162*s, "x", Want{Hold: control.ReasonBackoff, Until: 2163 * s}),
		)},
		// The floor and its doublings, which are not the server's waits,
		// are drawn at random over a quarter of themselves, so that
		// clients refused together come back apart: the floor (for a
		// short wait the server gave) and the cap, a minute, are
		// lengthened (no wait is shorter than the floor, and a long
		// outage is probed no more often than the cap says), a doubling below the cap shortened (no server back from
		// an outage is found later than the doubling finds it). Rand is
		// half its range: an eighth of each. Before, past the request's
		// own backoff, every doubling was exact, and clients refused
		// together by an outage probed it together for as long as it
		// lasted.
		{Name: "the floor and its doublings are spread", Steps: []Step{
			// A refusal that gives no wait: the floor, or the request's
			// own backoff drawn around it, random already.
			acq(0, "a", Want{Grant: true, Probe: true}),
			rel(0, "a", halfRand(refused(bare(500*ms))), Want{Plan: plan(s, s, control.ReasonBackoff), PauseUntil: s, PauseReason: control.ReasonBackoff}),
			acq(s, "b", Want{Grant: true, Probe: true}),
			rel(s, "b", halfRand(refused(bare(500*ms))), Want{Plan: plan(1750*ms, 1750*ms, control.ReasonBackoff), PauseUntil: 2750 * ms}),
			acq(2750*ms, "c", Want{Grant: true, Probe: true}),
			rel(2750*ms, "c", halfRand(refused(retryAfter(0))), Want{Plan: plan(3500*ms, 3500*ms, control.ReasonBackoff), PauseUntil: 6250 * ms}),
			acq(6*s, "x", Want{Hold: control.ReasonBackoff, Until: 6250 * ms}),
			// The request's own backoff, when longer, is its wait as it
			// is: randomised already.
			acq(6250*ms, "d", Want{Grant: true, Probe: true}),
			rel(6250*ms, "d", halfRand(refused(bare(20*s))), Want{Plan: plan(20*s, 20*s, control.ReasonBackoff), PauseUntil: 26250 * ms}),
			// While the learner measures the window (since the first
			// refusal), a short wait the server gave is raised to the
			// floor, not lengthened: the measurement's probes go after
			// half the time refused so far at most.
			acq(26250*ms, "e", Want{Grant: true, Probe: true}),
			rel(26250*ms, "e", ok(), Want{}),
			acq(26250*ms, "f", Want{Grant: true}),
			rel(26250*ms, "f", halfRand(refused(retryAfter(0))), Want{Plan: plan(s, s, control.ReasonBackoff), PauseUntil: 27250 * ms}),
		}},
		{Name: "a short wait the server gave is raised to the floor, spread", Steps: []Step{
			acq(0, "a", Want{Grant: true, Probe: true}),
			rel(0, "a", halfRand(refused(retryAfter(0))), Want{Plan: plan(1125*ms, 1125*ms, control.ReasonBackoff), PauseUntil: 1125 * ms, PauseReason: control.ReasonBackoff}),
			acq(s, "x", Want{Hold: control.ReasonBackoff, Until: 1125 * ms}),
		}},
		// An outage's pause is spread as the floor's doublings are: the
		// cap, a minute, lengthened. Here the key's floor is doubled
		// once (the flights of the outage gave a wait of a second), and
		// the outage's pause, doubled for 6 flights since it began,
		// binds.
		{Name: "an outage's pause is spread", Steps: outageOfShortWaits(45,
			acq(46*s, "o", Want{Grant: true, Probe: true}),
			rel(46*s, "o", halfRand(refused(bare(s))), Want{Plan: &control.Plan{Wait: 1750 * ms, Pause: 67500 * ms, Reason: control.ReasonBackoff, Denied: control.ReasonRetryBudget}, PauseUntil: 113500 * ms}),
			acq(113*s, "x", Want{Hold: control.ReasonBackoff, Until: 113500 * ms}),
		)},
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
			// second the server is in): unknown, not now. The key
			// pauses a second, for r=0 with no reset as for the
			// refusal's floor (not lengthened: the refusal ends a
			// window, as a bare refusal's does).
			rel(0, "a", refused(quotaWait(0), rl(20, 0, 0, 0)), Want{PauseUntil: s, PauseReason: control.ReasonQuota}),
			acq(900*ms, "x", Want{Hold: control.ReasonQuota}),
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
			acq(0, "a2", Want{Grant: true}),
			acq(0, "b", Want{Grant: true}),
			acq(0, "c", Want{Grant: true}),
			rel(0, "a", ok(rl(100, 60*s, 89, 60*s)), Want{}),
			acq(0, "d", Want{Grant: true}),
			acq(0, "e", Want{Grant: true}),
			rel(0, "a2", ok(rl(100, 60*s, 88, 60*s)), Want{}),
			acq(0, "f", Want{Grant: true}),
			acq(0, "g", Want{Grant: true, InFlight: 6}),
			rel(0, "b", refused(retryAfter(s)), Want{Plan: plan(s, s, control.ReasonRetryAfter)}),
			rel(0, "c", refused(retryAfter(s)), Want{Plan: plan(s, s, control.ReasonRetryAfter)}),
			rel(0, "d", refused(retryAfter(s)), Want{Plan: plan(s, s, control.ReasonRetryAfter)}),
			// The budget is spent: these retries spend tokens not back
			// yet; g's waits until one is back, 1.1s, instead of being
			// dropped. The key's pause stays the server's.
			rel(0, "e", refused(retryAfter(s)), Want{Plan: plan(s, s, control.ReasonRetryAfter)}),
			rel(0, "f", refused(retryAfter(s)), Want{Plan: plan(s, s, control.ReasonRetryAfter)}),
			rel(0, "g", refused(retryAfter(s)), Want{Plan: plan(1100*ms, s, control.ReasonRetryBudget), PauseUntil: s}),
			{At: s, Acquire: "g2", After: 1100 * ms, Want: Want{Hold: control.ReasonRetryBudget, Until: 1100 * ms}},
			{At: 1100 * ms, Acquire: "g3", After: 1100 * ms, Want: Want{Grant: true, Probe: true}},
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
			// Its answer opens the key, to two in flight since p, whose
			// answer may never come, is still out (one would leave the
			// key held behind it); the first probe's answer, later, is
			// read as any answer.
			rel(3100*ms, "q", ok(), Want{Probing: -1}),
			acq(3100*ms, "a", Want{Grant: true}),
			acq(3100*ms, "c", Want{Hold: control.ReasonConcurrency}),
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

// outageTable refuses 40 flights in a row, each after the first the probe
// sent once the pause the last refusal asked for had ended: an outage,
// where the retry budget drops retries. One acceptance ends it. The
// refusals of requests in flight together count once: 45 refused at once
// are one flight, whose retries the budget spaces out rather than drops
// (counted one by one, 40 of them made an outage).
func outageTable() Table {
	hint := func(r int64) control.Outcome { return ok(rl(1000, 60*s, r, 60*s)) }
	steps := []Step{
		acq(0, "p", Want{Grant: true, Probe: true}),
		rel(0, "p", hint(999), Want{}),
	}
	// Answers widen the ramp, one each.
	for i := range 41 {
		name := fmt.Sprintf("o%d", i)
		steps = append(steps, acq(0, name, Want{Grant: true}), rel(0, name, hint(998-int64(i)), Want{}))
	}
	for i := range 45 {
		steps = append(steps, acq(0, fmt.Sprintf("r%d", i), Want{Grant: true}))
	}
	for i := range 45 {
		steps = append(steps, rel(0, fmt.Sprintf("r%d", i), refused(retryAfter(s)), Want{}))
	}
	// One flight: its retries are spaced out, not dropped, the 20 the
	// budget may owe up to 10 s; past those, the last of the 45 keeps
	// the server's wait, the key's pause and probe spacing it (held as
	// long as the last owed, all would go together).
	steps[len(steps)-8].Want.Plan = plan(10*s, s, control.ReasonRetryBudget)
	steps[len(steps)-7].Want.Plan = plan(s, s, control.ReasonRetryAfter)
	steps[len(steps)-1].Want.Plan = plan(s, s, control.ReasonRetryAfter)
	// 39 more flights refused, each a probe after the pause.
	at := time.Duration(s)
	for f := range 39 {
		name := fmt.Sprintf("f%d", f)
		steps = append(steps, acq(at, name, Want{Grant: true, Probe: true}), rel(at, name, refused(retryAfter(s)), Want{}))
		at += s
	}
	// The 41st flight's refusal goes back to the caller.
	steps = append(steps,
		acq(at, "last", Want{Grant: true, Probe: true}),
		rel(at, "last", refused(retryAfter(s)), Want{Plan: &control.Plan{Wait: s, Pause: s, Reason: control.ReasonRetryAfter, Denied: control.ReasonRetryBudget}}),
		acq(at+s, "ok", Want{Grant: true, Probe: true}),
		rel(at+s, "ok", ok(), Want{}),
		// No outage: the next refusal is retried after its wait (the
		// budget's debt is repaid by now).
		acq(at+s, "again", Want{Grant: true}),
		rel(at+s, "again", refused(retryAfter(s)), Want{Plan: plan(s, s, control.ReasonRetryAfter)}),
	)
	return Table{Name: "outage drops retries", Steps: steps}
}

// halfRand is o with the random value of its pause's jitter at half its
// range.
func halfRand(o control.Outcome) control.Outcome {
	o.Rand = 1 << 63
	return o
}

// outageOfShortWaits is a lone request refused with no wait, then n lone
// requests each refused with Retry-After: 1 a second after the last, then
// more.
func outageOfShortWaits(n int, more ...Step) []Step {
	steps := []Step{acq(0, "b", Want{Grant: true, Probe: true}), rel(0, "b", refused(bare(s)), Want{})}
	for i := range n {
		at, name := time.Duration(i+1)*s, fmt.Sprintf("f%d", i)
		steps = append(steps, acq(at, name, Want{Grant: true, Probe: true}), rel(at, name, refused(retryAfter(s)), Want{}))
	}
	return append(steps, more...)
}

// refusedInRow is n lone requests, each sent as the pause of the last ends,
// each refused with no wait (a backoff of a second).
func refusedInRow(n int) []Step {
	var steps []Step
	at := time.Duration(0)
	for i := range n {
		name := fmt.Sprintf("f%d", i)
		steps = append(steps, acq(at, name, Want{Grant: true, Probe: true}), rel(at, name, refused(bare(s)), Want{}))
		at += min(s<<min(i, 16), time.Minute) // the key's pause, doubled up to a minute
	}
	return steps
}
