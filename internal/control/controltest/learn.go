package controltest

import (
	"fmt"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// learnTables are the rules of the learner's growth and decrease.
func learnTables() []Table {
	return []Table{
		{Name: "a refused step of growth is undone without a pause, and a refused burst step steps the rate from the refusal", Steps: learnBurstRefused()},
		{Name: "once a burst step was refused, a rate step in bursts is tried for one window and adds a request a window", Steps: learnBurstRefused(
			// The window after the refusal, accepted whole: the rate
			// step taken at the refusal holds.
			acq(2*s+750*ms, "k", Want{Grant: true, Probe: true}),
			rel(2*s+750*ms, "k", ok(), Want{}),
			acq(2*s+750*ms, "l", Want{Grant: true}),
			// The burst is the server's (its step was refused): the
			// next rate step adds a request a window, 2 per 500ms
			// (not 2 per 375ms, half of w), and it is tried for one
			// window, not until a burst of 3 would be spent (1.5s).
			rel(2*s+750*ms, "l", ok(), Want{Learned: &Quota{Q: 2, W: 500 * ms}}),
			acq(2*s+750*ms, "m", Want{Hold: control.ReasonAdaptive, Until: 3*s + 250*ms}),
			acq(3*s+250*ms, "m", Want{Grant: true, Probe: true}),
			rel(3*s+250*ms, "m", ok(), Want{}),
			acq(3*s+250*ms, "n", Want{Grant: true}),
			rel(3*s+250*ms, "n", ok(), Want{Learned: &Quota{Q: 2, W: 333333334}}),
		)},
		{Name: "a learned burst's lone probe refused goes back to the window measured", Steps: learnBurstRefused(
			acq(2*s+750*ms, "k", Want{Grant: true, Probe: true}),
			rel(2*s+750*ms, "k", ok(), Want{}),
			acq(2*s+750*ms, "l", Want{Grant: true}),
			rel(2*s+750*ms, "l", ok(), Want{Learned: &Quota{Q: 2, W: 500 * ms}}),
			acq(2*s+750*ms, "m", Want{Hold: control.ReasonAdaptive, Until: 3*s + 250*ms}),
			acq(3*s+250*ms, "m", Want{Grant: true, Probe: true}),
			rel(3*s+250*ms, "m", ok(), Want{}),
			acq(3*s+250*ms, "n", Want{Grant: true}),
			rel(3*s+250*ms, "n", ok(), Want{Learned: &Quota{Q: 2, W: 333333334}}),
			acq(3*s+250*ms, "o", Want{Hold: control.ReasonAdaptive, Until: 3*s + 583333334}),
			// The probe that begins the next learned burst is refused
			// with nothing accepted in its cycle: the window the last
			// burst spent has not ended (a fixed window that bursts
			// faster than its own drifted into; a bucket would have
			// refilled a token). Every rate step since the measurement
			// is undone, 2 per 1s, without a pause, and the rate step
			// is pinned.
			acq(3*s+583333334, "o", Want{Grant: true, Probe: true}),
			rel(3*s+583333334, "o", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 2, W: s}}),
		)},
		{Name: "a refused burst of a learned quota is paced evenly without a pause", Steps: learnEven(
			// The even pace: one start per w/q, from the refusal. The
			// two starts the burst spent at 1s are what the server had
			// left then, and are not counted against it: counted, they
			// would hold the pace's last starts to the end of the
			// learned window.
			acq(s, "k", Want{Hold: control.ReasonAdaptive, Until: s + 250*ms}),
			acq(s+250*ms, "k", Want{Grant: true}),
			rel(s+250*ms, "k", ok(), Want{}),
			acq(s+250*ms, "l", Want{Hold: control.ReasonAdaptive, Until: s + 500*ms}),
			acq(s+500*ms, "l", Want{Grant: true}),
			rel(s+500*ms, "l", ok(), Want{}),
			acq(s+500*ms, "m", Want{Hold: control.ReasonAdaptive, Until: s + 750*ms}),
		)},
		{Name: "a whole learned window at the even pace keeps it", Steps: learnEven(
			acq(s+250*ms, "k", Want{Grant: true}),
			rel(s+250*ms, "k", ok(), Want{}),
			acq(s+250*ms, "l", Want{Hold: control.ReasonAdaptive, Until: s + 500*ms}),
			acq(s+500*ms, "l", Want{Grant: true}),
			rel(s+500*ms, "l", ok(), Want{}),
			acq(s+750*ms, "i2", Want{Grant: true}),
			rel(s+750*ms, "i2", ok(), Want{}),
			// A learned window on: the next one, accepted whole at the
			// even pace, ends the trial.
			acq(2*s, "j2", Want{Grant: true, Probe: true}),
			rel(2*s, "j2", ok(), Want{}),
			acq(2*s+250*ms, "m", Want{Grant: true}),
			rel(2*s+250*ms, "m", ok(), Want{}),
			acq(2*s+500*ms, "n", Want{Grant: true}),
			rel(2*s+500*ms, "n", ok(), Want{}),
			acq(2*s+750*ms, "o", Want{Grant: true}),
			// Kept: the quota is a rate now, and grows every learned
			// window it holds (not every two, as bursts do), by a rate
			// step (a burst step would grow the rate too): 4 per 750ms
			// from 4 per 1s, paced evenly, one start per 187.5ms.
			rel(2*s+750*ms, "o", ok(), Want{Learned: &Quota{Q: 4, W: 750 * ms}}),
			acq(2*s+750*ms, "t", Want{Hold: control.ReasonAdaptive, Until: 2*s + 9375*ms/10}),
		)},
		{Name: "a whole learned window at the even pace keeps it, though it held fewer than q", Steps: learnEven(
			acq(s+250*ms, "k", Want{Grant: true}),
			rel(s+250*ms, "k", ok(), Want{}),
			acq(s+250*ms, "l", Want{Hold: control.ReasonAdaptive, Until: s + 500*ms}),
			acq(s+500*ms, "l", Want{Grant: true}),
			rel(s+500*ms, "l", ok(), Want{}),
			acq(s+750*ms, "i2", Want{Grant: true}),
			rel(s+750*ms, "i2", ok(), Want{}),
			acq(2*s, "j2", Want{Grant: true, Probe: true}),
			rel(2*s, "j2", ok(), Want{}),
			acq(2*s+250*ms, "m", Want{Grant: true}),
			rel(2*s+250*ms, "m", ok(), Want{}),
			// The pace holds the next request; it comes back only at
			// 2.75s, and the learned window ends with three of its
			// four starts used, every one accepted.
			acq(2*s+300*ms, "n", Want{Hold: control.ReasonAdaptive, Until: 2*s + 500*ms}),
			acq(2*s+750*ms, "n", Want{Grant: true}),
			rel(2*s+750*ms, "n", ok(), Want{}),
			// The next learned window begins: the one before held the
			// key back and was accepted whole, so the even pace is
			// kept, and a refusal of it cuts the rate by a quarter
			// without a pause, as a rate's.
			acq(3*s, "o", Want{Grant: true, Probe: true}),
			rel(3*s, "o", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 4, W: 1333333333}}),
		)},
		{Name: "a rate that held, refused, is cut by a quarter without a pause; refused again with nothing accepted, measured", Steps: learnRate(
			// Refused off trial (the step before was undone, and the
			// next is a learned window away): the rate that held, 4
			// per 937.5ms (750ms and the margin the undone step left),
			// is cut to three quarters, 4 per 1.25s, without a pause
			// or a measurement; only the refused request waits its
			// floor, and the next start keeps the even pace, from the
			// refusal. (The undone step's refusal, a probe, leaves the
			// next request a probe.)
			acq(3*s+59375*ms/100, "c1", Want{Hold: control.ReasonAdaptive, Until: 3*s + 828125*ms/1000}),
			acq(3*s+828125*ms/1000, "c1", Want{Grant: true, Probe: true}),
			rel(3*s+828125*ms/1000, "c1", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 4, W: 1250 * ms}}),
			acq(3*s+828125*ms/1000, "c2", Want{Hold: control.ReasonAdaptive, Until: 4*s + 140625*ms/1000}),
			// Refused again with no acceptance since the cut: not the
			// rate's (an outage, or a much smaller limit). The key
			// pauses for its backoff and measures again.
			acq(4*s+140625*ms/1000, "c2", Want{Grant: true, Probe: true}),
			rel(4*s+140625*ms/1000, "c2", refused(bare(4*s)), Want{Plan: &control.Plan{Wait: 4 * s, Pause: 4 * s, Reason: control.ReasonBackoff, Retry: true}, PauseUntil: 8*s + 140625*ms/1000}),
		)},
		{Name: "a rate cut and accepted since is cut again at its next refusal", Steps: learnRate(
			acq(3*s+828125*ms/1000, "c1", Want{Grant: true, Probe: true}),
			rel(3*s+828125*ms/1000, "c1", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 4, W: 1250 * ms}}),
			acq(3*s+828125*ms/1000, "c2", Want{Hold: control.ReasonAdaptive, Until: 4*s + 140625*ms/1000}),
			acq(4*s+140625*ms/1000, "c2", Want{Grant: true, Probe: true}),
			rel(4*s+140625*ms/1000, "c2", ok(), Want{}),
			// An acceptance since the cut: the next refusal is the
			// rate's again, cut again, without a pause.
			acq(4*s+140625*ms/1000, "c3", Want{Hold: control.ReasonAdaptive, Until: 4*s + 453125*ms/1000}),
			acq(4*s+453125*ms/1000, "c3", Want{Grant: true}),
			rel(4*s+453125*ms/1000, "c3", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 4, W: 1666666666}}),
		)},
		{Name: "a refusal at the even pace goes back to bursts and backs off multiplicatively", Steps: learnEvenRefused()},

		{Name: "two decreases in a row that count as few are trusted in full", Steps: learnEight()},
		{Name: "after a decrease, a refused burst step pins the rate step too", Steps: learnHalved(
			acq(2*s, "h0", Want{Grant: true}),
			rel(2*s, "h0", ok(), Want{}),
			acq(2*s, "h1", Want{Grant: true}),
			rel(2*s, "h1", ok(), Want{}),
			acq(2*s, "h2", Want{Grant: true}),
			rel(2*s, "h2", ok(), Want{}),
			acq(2*s, "h3", Want{Hold: control.ReasonAdaptive, Until: 3 * s}),
			acq(3*s, "h3", Want{Grant: true, Probe: true}),
			rel(3*s, "h3", ok(), Want{}),
			acq(3*s, "h4", Want{Grant: true}),
			rel(3*s, "h4", ok(), Want{}),
			acq(3*s, "h5", Want{Grant: true}),
			rel(3*s, "h5", ok(), Want{}),
			acq(3*s, "h6", Want{Grant: true}),
			rel(3*s, "h6", ok(), Want{}),
			acq(3*s, "h7", Want{Hold: control.ReasonAdaptive, Until: 4 * s}),
			acq(4*s, "h7", Want{Grant: true, Probe: true}),
			rel(4*s, "h7", ok(), Want{}),
			acq(4*s, "h8", Want{Grant: true}),
			rel(4*s, "h8", ok(), Want{}),
			acq(4*s, "h9", Want{Grant: true}),
			rel(4*s, "h9", ok(), Want{}),
			acq(4*s, "h10", Want{Grant: true}),
			rel(4*s, "h10", ok(), Want{}),
			acq(4*s, "h11", Want{Hold: control.ReasonAdaptive, Until: 5 * s}),
			acq(5*s, "h11", Want{Grant: true, Probe: true}),
			rel(5*s, "h11", ok(), Want{}),
			acq(5*s, "h12", Want{Grant: true}),
			rel(5*s, "h12", ok(), Want{}),
			acq(5*s, "h13", Want{Grant: true}),
			rel(5*s, "h13", ok(), Want{}),
			acq(5*s, "h14", Want{Grant: true}),
			rel(5*s, "h14", ok(), Want{}),
			acq(5*s, "h15", Want{Hold: control.ReasonAdaptive, Until: 6 * s}),
			// Four learned windows on (each decrease doubled the windows
			// between steps): the burst grows by one, on trial.
			acq(6*s, "h15", Want{Grant: true, Probe: true}),
			rel(6*s, "h15", ok(), Want{Learned: &Quota{Q: 5, W: s}}),
			acq(6*s, "h16", Want{Grant: true}),
			rel(6*s, "h16", ok(), Want{}),
			acq(6*s, "h17", Want{Grant: true}),
			rel(6*s, "h17", ok(), Want{}),
			acq(6*s, "h18", Want{Grant: true}),
			rel(6*s, "h18", ok(), Want{}),
			acq(6*s, "h19", Want{Grant: true}),
			rel(6*s, "h19", ok(), Want{}),
			acq(6*s, "h20", Want{Hold: control.ReasonAdaptive, Until: 7 * s}),
			acq(7*s, "h20", Want{Grant: true, Probe: true}),
			rel(7*s, "h20", ok(), Want{}),
			acq(7*s, "r1", Want{Grant: true}),
			rel(7*s, "r1", ok(), Want{}),
			acq(7*s, "r2", Want{Grant: true}),
			rel(7*s, "r2", ok(), Want{}),
			acq(7*s, "r3", Want{Grant: true}),
			rel(7*s, "r3", ok(), Want{}),
			acq(7*s, "r4", Want{Grant: true}),
			// The burst step refused, after a decrease: undone, and the rate
			// step is pinned too, since it would add no more than the burst
			// step did, a request a window, a rate just refused.
			rel(7*s, "r4", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 4, W: s}}),
			acq(7*s, "r5", Want{Hold: control.ReasonAdaptive, Until: 8 * s}),
			acq(8*s, "r5", Want{Grant: true, Probe: true}),
			rel(8*s, "r5", ok(), Want{}),
			acq(8*s, "s0", Want{Grant: true}),
			rel(8*s, "s0", ok(), Want{}),
			acq(8*s, "s1", Want{Grant: true}),
			rel(8*s, "s1", ok(), Want{}),
			acq(8*s, "s2", Want{Grant: true}),
			rel(8*s, "s2", ok(), Want{}),
			acq(8*s, "s3", Want{Hold: control.ReasonAdaptive, Until: 9 * s}),
			acq(9*s, "s3", Want{Grant: true, Probe: true}),
			rel(9*s, "s3", ok(), Want{}),
			acq(9*s, "s4", Want{Grant: true}),
			rel(9*s, "s4", ok(), Want{}),
			acq(9*s, "s5", Want{Grant: true}),
			rel(9*s, "s5", ok(), Want{}),
			acq(9*s, "s6", Want{Grant: true}),
			rel(9*s, "s6", ok(), Want{}),
			acq(9*s, "s7", Want{Hold: control.ReasonAdaptive, Until: 10 * s}),
			acq(10*s, "s7", Want{Grant: true, Probe: true}),
			rel(10*s, "s7", ok(), Want{}),
			acq(10*s, "s8", Want{Grant: true}),
			rel(10*s, "s8", ok(), Want{}),
			acq(10*s, "s9", Want{Grant: true}),
			rel(10*s, "s9", ok(), Want{}),
			acq(10*s, "s10", Want{Grant: true}),
			rel(10*s, "s10", ok(), Want{}),
			acq(10*s, "s11", Want{Hold: control.ReasonAdaptive, Until: 11 * s}),
			acq(11*s, "s11", Want{Grant: true, Probe: true}),
			// Four learned windows on: no step of growth.
			rel(11*s, "s11", ok(), Want{Learned: &Quota{Q: 4, W: s}}),
			acq(11*s, "s12", Want{Grant: true}),
			rel(11*s, "s12", ok(), Want{}),
			acq(11*s, "s13", Want{Grant: true}),
			rel(11*s, "s13", ok(), Want{}),
			acq(11*s, "s14", Want{Grant: true}),
			rel(11*s, "s14", ok(), Want{}),
			acq(11*s, "s15", Want{Hold: control.ReasonAdaptive, Until: 12 * s}),
		)},
		{Name: "after a multiplicative decrease the rate grows by at most a request a window", Steps: learnHalved(
			acq(2*s, "h0", Want{Grant: true}),
			rel(2*s, "h0", ok(), Want{}),
			acq(2*s, "h1", Want{Grant: true}),
			rel(2*s, "h1", ok(), Want{}),
			acq(2*s, "h2", Want{Grant: true}),
			rel(2*s, "h2", ok(), Want{}),
			acq(2*s, "h3", Want{Hold: control.ReasonAdaptive, Until: 3 * s}),
			acq(3*s, "h3", Want{Grant: true, Probe: true}),
			rel(3*s, "h3", ok(), Want{}),
			acq(3*s, "h4", Want{Grant: true}),
			rel(3*s, "h4", ok(), Want{}),
			acq(3*s, "h5", Want{Grant: true}),
			rel(3*s, "h5", ok(), Want{}),
			acq(3*s, "h6", Want{Grant: true}),
			rel(3*s, "h6", ok(), Want{}),
			acq(3*s, "h7", Want{Hold: control.ReasonAdaptive, Until: 4 * s}),
			acq(4*s, "h7", Want{Grant: true, Probe: true}),
			rel(4*s, "h7", ok(), Want{}),
			acq(4*s, "h8", Want{Grant: true}),
			rel(4*s, "h8", ok(), Want{}),
			acq(4*s, "h9", Want{Grant: true}),
			rel(4*s, "h9", ok(), Want{}),
			acq(4*s, "h10", Want{Grant: true}),
			rel(4*s, "h10", ok(), Want{}),
			acq(4*s, "h11", Want{Hold: control.ReasonAdaptive, Until: 5 * s}),
			acq(5*s, "h11", Want{Grant: true, Probe: true}),
			rel(5*s, "h11", ok(), Want{}),
			acq(5*s, "h12", Want{Grant: true}),
			rel(5*s, "h12", ok(), Want{}),
			acq(5*s, "h13", Want{Grant: true}),
			rel(5*s, "h13", ok(), Want{}),
			acq(5*s, "h14", Want{Grant: true}),
			rel(5*s, "h14", ok(), Want{}),
			acq(5*s, "h15", Want{Hold: control.ReasonAdaptive, Until: 6 * s}),
			// Four learned windows on (each decrease doubled the windows
			// between steps): the burst grows by one, on trial.
			acq(6*s, "h15", Want{Grant: true, Probe: true}),
			rel(6*s, "h15", ok(), Want{Learned: &Quota{Q: 5, W: s}}),
			acq(6*s, "h16", Want{Grant: true}),
			rel(6*s, "h16", ok(), Want{}),
			acq(6*s, "h17", Want{Grant: true}),
			rel(6*s, "h17", ok(), Want{}),
			acq(6*s, "h18", Want{Grant: true}),
			rel(6*s, "h18", ok(), Want{}),
			acq(6*s, "h19", Want{Grant: true}),
			rel(6*s, "h19", ok(), Want{}),
			acq(6*s, "h20", Want{Hold: control.ReasonAdaptive, Until: 7 * s}),
			acq(7*s, "h20", Want{Grant: true, Probe: true}),
			rel(7*s, "h20", ok(), Want{}),
			acq(7*s, "h21", Want{Grant: true}),
			rel(7*s, "h21", ok(), Want{}),
			acq(7*s, "h22", Want{Grant: true}),
			rel(7*s, "h22", ok(), Want{}),
			acq(7*s, "h23", Want{Grant: true}),
			rel(7*s, "h23", ok(), Want{}),
			acq(7*s, "h24", Want{Grant: true}),
			// The burst step held; the rate step after a decrease adds
			// one request a window, w/(q+1), not a quarter of w: 5 per
			// 833ms, not 5 per 750ms.
			rel(7*s, "h24", ok(), Want{Learned: &Quota{Q: 5, W: 833333334}}),
		)},
		{Name: "a probe refused while measuring bounds the window: the first step tests its lower half", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			acq(0, "a", Want{Grant: true}),
			rel(0, "a", ok(), Want{}),
			acq(0, "x", Want{Grant: true}),
			rel(0, "x", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: s}),
			// The probes after the floor are refused at 1s and 2s:
			// the window is longer than 2s.
			acq(s, "b", Want{Grant: true, Probe: true}),
			rel(s, "b", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: 2 * s}),
			acq(2*s, "b", Want{Grant: true, Probe: true}),
			rel(2*s, "b", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: 3 * s}),
			// Accepted at 3s: 2 per 3s, the window between 2s and 3s.
			acq(3*s, "b", Want{Grant: true, Probe: true}),
			rel(3*s, "b", ok(), Want{Learned: &Quota{Q: 2, W: 3 * s}}),
			acq(3*s, "c", Want{Grant: true}),
			rel(3*s, "c", ok(), Want{}),
			acq(3*s, "d", Want{Hold: control.ReasonAdaptive, Until: 6 * s}),
			// One learned window on, as every first step (and after a
			// later measurement too, so bounded), the first step is a
			// rate step, half way to the probe refused at 2s (not a
			// quarter of w, nor a burst step first).
			acq(6*s, "d", Want{Grant: true, Probe: true}),
			rel(6*s, "d", ok(), Want{Learned: &Quota{Q: 2, W: 2*s + 500*ms}}),
			acq(6*s, "e", Want{Grant: true}),
			rel(6*s, "e", ok(), Want{}),
			acq(6*s, "f", Want{Hold: control.ReasonAdaptive, Until: 8*s + 500*ms}),
		}},
		{Name: "a bounded measurement's first burst refused takes its step from the refusal", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			acq(0, "a", Want{Grant: true}),
			rel(0, "a", ok(), Want{}),
			acq(0, "x", Want{Grant: true}),
			rel(0, "x", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: s}),
			acq(s, "b", Want{Grant: true, Probe: true}),
			rel(s, "b", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: 2 * s}),
			acq(2*s, "b", Want{Grant: true, Probe: true}),
			rel(2*s, "b", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: 3 * s}),
			// 2 per 3s, the window between 2s and 3s; the burst after
			// the probe is refused (a sliding-window counter still
			// weighs the first burst).
			acq(3*s, "b", Want{Grant: true, Probe: true}),
			rel(3*s, "b", ok(), Want{Learned: &Quota{Q: 2, W: 3 * s}}),
			acq(3*s, "c", Want{Grant: true}),
			// The server has nothing left: the step half way to the
			// probe refused at 2s is taken now, with the even pace,
			// one start per 1.25s from the refusal, not a learned
			// window later.
			rel(3*s, "c", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 2, W: 2*s + 500*ms}}),
			acq(3*s, "d", Want{Hold: control.ReasonAdaptive, Until: 4*s + 250*ms}),
			acq(4*s+250*ms, "d", Want{Grant: true, Probe: true}),
			rel(4*s+250*ms, "d", ok(), Want{}),
			acq(5*s+500*ms, "e", Want{Grant: true}),
			rel(5*s+500*ms, "e", ok(), Want{}),
			acq(6*s+750*ms, "f", Want{Grant: true}),
			// Taken from a spent server, a rate faster than its own is
			// refused in the step's first window: one window accepted
			// whole ends the trial (not the 12.5s a bucket of 2 would
			// take to spend its burst), and the next step follows: the
			// quota is a rate now (a whole window held at the even
			// pace), so a rate step, half way to the probe refused at
			// 2s, not a burst step.
			rel(6*s+750*ms, "f", ok(), Want{Learned: &Quota{Q: 2, W: 2*s + 250*ms}}),
		}},
		{Name: "a step taken at a refusal is put back when the key idles before its window", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			acq(0, "a", Want{Grant: true}),
			rel(0, "a", ok(), Want{}),
			acq(0, "x", Want{Grant: true}),
			rel(0, "x", refused(bare(4*s)), Want{PauseUntil: s}),
			acq(s, "b", Want{Grant: true, Probe: true}),
			rel(s, "b", refused(bare(4*s)), Want{PauseUntil: 2 * s}),
			acq(2*s, "b", Want{Grant: true, Probe: true}),
			rel(2*s, "b", refused(bare(4*s)), Want{PauseUntil: 3 * s}),
			acq(3*s, "b", Want{Grant: true, Probe: true}),
			rel(3*s, "b", ok(), Want{Learned: &Quota{Q: 2, W: 3 * s}}),
			acq(3*s, "c", Want{Grant: true}),
			rel(3*s, "c", refused(bare(4*s)), Want{PauseUntil: -1, Learned: &Quota{Q: 2, W: 2*s + 500*ms}}),
			// The key idles: the server refills, and the first window
			// after the idle would pass the step untested.
			acq(30*s, "d", Want{Grant: true}),
			rel(30*s, "d", ok(), Want{}),
			acq(30*s, "e", Want{Hold: control.ReasonAdaptive, Until: 31*s + 250*ms}),
			acq(31*s+250*ms, "e", Want{Grant: true, Probe: true}),
			rel(31*s+250*ms, "e", ok(), Want{}),
			acq(32*s+500*ms, "f", Want{Grant: true}),
			// That window ends the trial: the step is put back, to be
			// taken again a learned window on, on trial until the
			// server's burst would be spent.
			rel(32*s+500*ms, "f", ok(), Want{Learned: &Quota{Q: 2, W: 3 * s}}),
		}},
		{Name: "a measurement with no probe refused takes a burst step first", Steps: learnTwo(
			// Learned at 1s by the first probe after the floor: no
			// lower bound, so the first step, one learned window on
			// as every first step, is a burst step, not a rate step.
			acq(2*s, "f", Want{Grant: true, Probe: true}),
			rel(2*s, "f", ok(), Want{Learned: &Quota{Q: 3, W: s}}),
		)},
		{Name: "a learned window's lone probe refused with nothing accepted in its cycle lengthens the window by the refusal floor", Steps: learnEvenRefused(
			// The probe of the learned window begun at 3s is refused,
			// nothing accepted in its cycle and no step to undo: the
			// window that the burst at 2s spent had not ended (a fixed
			// window measured from a burst sent part way into it). The
			// window is lengthened by the floor, and the key pauses for
			// its backoff and measures as before.
			acq(3*s, "n", Want{Grant: true, Probe: true}),
			rel(3*s, "n", refused(bare(4*s)), Want{Plan: &control.Plan{Wait: 4 * s, Pause: 4 * s, Reason: control.ReasonBackoff, Retry: true}, PauseUntil: 7 * s, Learned: &Quota{Q: 2, W: 2 * s}}),
			// The measurement counts nothing and changes neither q nor
			// w: the next learned window begins 2s after the probe
			// accepted at 7s.
			acq(7*s, "o", Want{Grant: true, Probe: true}),
			rel(7*s, "o", ok(), Want{Learned: &Quota{Q: 2, W: 2 * s}}),
			acq(7*s, "p2", Want{Grant: true}),
			rel(7*s, "p2", ok(), Want{}),
			acq(7*s, "q2", Want{Hold: control.ReasonAdaptive, Until: 9 * s}),
		)},
		{Name: "a first learned burst whose lone probe is refused lengthens the window, not paced evenly", Steps: learnTwo(
			// 2 per 1s learned at 1s from a burst at 0 that may have
			// gone part way into the server's window. The probe of
			// the learned window begun at 2s is refused with nothing
			// accepted in its cycle: no room at all, which an even
			// pace would meet too. The window is lengthened by the
			// floor and the key measures, as a key in bursts does.
			acq(2*s, "f", Want{Grant: true, Probe: true}),
			rel(2*s, "f", refused(bare(4*s)), Want{Plan: &control.Plan{Wait: 4 * s, Pause: 4 * s, Reason: control.ReasonBackoff, Retry: true}, PauseUntil: 6 * s, Learned: &Quota{Q: 2, W: 2 * s}}),
			acq(6*s, "g", Want{Grant: true, Probe: true}),
			rel(6*s, "g", ok(), Want{Learned: &Quota{Q: 2, W: 2 * s}}),
			acq(6*s, "h", Want{Grant: true}),
			rel(6*s, "h", ok(), Want{}),
			acq(6*s, "i", Want{Hold: control.ReasonAdaptive, Until: 8 * s}),
		)},
		{Name: "the first step of growth is taken one learned window after the first measurement", Steps: learnTwo(
			// 2 per 1s learned at 1s, and f held back in the window
			// that began there: at the first acceptance a learned
			// window on, the burst grows (not two windows on, as
			// later steps after a step refused), and the window
			// begun at 2s takes the third request at once.
			acq(2*s, "f", Want{Grant: true, Probe: true}),
			rel(2*s, "f", ok(), Want{Learned: &Quota{Q: 3, W: s}}),
			acq(2*s, "g", Want{Grant: true}),
			rel(2*s, "g", ok(), Want{}),
			acq(2*s, "h", Want{Grant: true}),
			rel(2*s, "h", ok(), Want{}),
			acq(2*s, "i", Want{Hold: control.ReasonAdaptive, Until: 3 * s}),
		)},
		{Name: "the refusals of a flight count once: a late one does not lengthen the pause", Steps: append(slowProbe(),
			acq(0, "a", Want{Grant: true}),
			acq(0, "b", Want{Grant: true}),
			// Retry-After: 0 waits the floor; at the end of a window
			// (requests were accepted in it), as a bare refusal does:
			// not doubled, nor lengthened.
			rel(0, "a", refused(retryAfter(0)), Want{PauseUntil: s, PauseReason: control.ReasonBackoff}),
			// The second refusal of the same flight does not lengthen
			// the key's pause.
			rel(0, "b", refused(retryAfter(0)), Want{
				Plan:        &control.Plan{Wait: s, Pause: s, Reason: control.ReasonBackoff, Retry: true},
				PauseUntil:  s,
				PauseReason: control.ReasonBackoff,
			}),
			acq(s, "c", Want{Grant: true, Probe: true}),
		)},
		{Name: "a late refusal of a flight pauses the key a refusal floor from its arrival", Steps: append(statedProbe(),
			acq(0, "a", Want{Grant: true}),
			acq(0, "b", Want{Grant: true}),
			rel(0, "a", refused(bare(4*s)), Want{PauseUntil: s}),
			// Refused 950ms after the first: no request to the key
			// goes within the floor of it, and the refused request
			// itself waits its own backoff.
			rel(950*ms, "b", refused(bare(4*s)), Want{
				Plan:       &control.Plan{Wait: s, Pause: s, Reason: control.ReasonBackoff, Retry: true},
				PauseUntil: 1950 * ms,
			}),
			acq(s, "c", Want{Hold: control.ReasonBackoff, Until: 1950 * ms}),
			acq(1950*ms, "c", Want{Grant: true, Probe: true}),
		)},
		{Name: "a late refusal of a flight does not shorten the wait the server gave", Steps: append(slowProbe(),
			acq(0, "a", Want{Grant: true}),
			acq(0, "b", Want{Grant: true}),
			rel(0, "a", refused(retryAfter(0)), Want{PauseUntil: s}),
			// retry-after-ms: 900, below the floor and the second in a
			// row: raised to the floor, and nothing goes before the
			// server's 900ms either.
			rel(900*ms, "b", refused(control.Refusal{Wait: 900 * ms, Given: true, Reason: control.ReasonRetryAfter, Retryable: true, MaxWait: 10 * time.Minute}), Want{
				Plan:       &control.Plan{Wait: s, Pause: s, Reason: control.ReasonBackoff, Retry: true},
				PauseUntil: 1900 * ms,
			}),
			acq(s, "c", Want{Hold: control.ReasonBackoff, Until: 1900 * ms}),
		)},
		{Name: "a refusal after a pause for a spent quota is no late refusal", Steps: append(slowProbe(),
			acq(0, "a", Want{Grant: true}),
			acq(0, "b", Want{Grant: true}),
			// Accepted, the quota spent until 200ms: a pause, not a
			// refusal.
			rel(0, "a", ok(rl(10, s, 0, 200*ms)), Want{PauseUntil: 200 * ms, PauseReason: control.ReasonQuota}),
			// b, in flight before that pause, is the first refusal:
			// the key pauses its full backoff from it.
			rel(100*ms, "b", refused(bare(4*s)), Want{PauseUntil: 1100 * ms, PauseReason: control.ReasonBackoff}),
			acq(200*ms, "c", Want{Hold: control.ReasonBackoff, Until: 1100 * ms}),
		)},
		{Name: "a rate step stays on trial until the server's burst would be spent", Steps: learnTwo(
			// The burst grows by one, and holds once a window begun
			// after it is accepted whole.
			acq(2*s, "f", Want{Grant: true, Probe: true}),
			rel(2*s, "f", ok(), Want{Learned: &Quota{Q: 3, W: s}}),
			acq(2*s, "g", Want{Grant: true}),
			rel(2*s, "g", ok(), Want{}),
			acq(2*s, "h", Want{Grant: true}),
			rel(2*s, "h", ok(), Want{}),
			acq(2*s, "i", Want{Hold: control.ReasonAdaptive, Until: 3 * s}),
			acq(3*s, "i", Want{Grant: true, Probe: true}),
			rel(3*s, "i", ok(), Want{}),
			acq(3*s, "j", Want{Grant: true}),
			rel(3*s, "j", ok(), Want{}),
			acq(3*s, "k", Want{Grant: true}),
			// It held: the rate grows, w by a quarter. The server's
			// burst is 3 at most so far, spent at 3 per 0.75s against
			// 3 per 1s in 3s: the step is on trial until 6s.
			rel(3*s, "k", ok(), Want{Learned: &Quota{Q: 3, W: 750 * ms}}),
			acq(3*s, "l", Want{Hold: control.ReasonAdaptive, Until: 3*s + 750*ms}),
			acq(3*s+750*ms, "l", Want{Grant: true, Probe: true}),
			rel(3*s+750*ms, "l", ok(), Want{}),
			acq(3*s+750*ms, "m", Want{Grant: true}),
			rel(3*s+750*ms, "m", ok(), Want{}),
			acq(3*s+750*ms, "n", Want{Grant: true}),
			rel(3*s+750*ms, "n", ok(), Want{}),
			acq(3*s+750*ms, "o", Want{Hold: control.ReasonAdaptive, Until: 4*s + 500*ms}),
			acq(4*s+500*ms, "o", Want{Grant: true, Probe: true}),
			rel(4*s+500*ms, "o", ok(), Want{}),
			acq(4*s+500*ms, "q", Want{Grant: true}),
			rel(4*s+500*ms, "q", ok(), Want{}),
			acq(4*s+500*ms, "r", Want{Grant: true}),
			rel(4*s+500*ms, "r", ok(), Want{}),
			acq(4*s+500*ms, "t", Want{Hold: control.ReasonAdaptive, Until: 5*s + 250*ms}),
			// Two windows accepted whole at the faster rate, and then
			// a refusal, before 6s: the step's still, not the learned
			// quota's. It is undone without a pause.
			acq(5*s+250*ms, "t", Want{Grant: true, Probe: true}),
			rel(5*s+250*ms, "t", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 3, W: s}}),
			// The refused request counts against the window it
			// overdrew, begun at 4.5s: the next begins at 5.5s, with
			// the whole quota.
			acq(5*s+250*ms, "u", Want{Hold: control.ReasonAdaptive, Until: 5*s + 500*ms}),
			acq(5*s+500*ms, "u", Want{Grant: true, Probe: true}),
			rel(5*s+500*ms, "u", ok(), Want{}),
			acq(5*s+500*ms, "v", Want{Grant: true}),
			rel(5*s+500*ms, "v", ok(), Want{}),
			acq(5*s+500*ms, "w", Want{Grant: true}),
			rel(5*s+500*ms, "w", ok(), Want{}),
			acq(5*s+500*ms, "y", Want{Hold: control.ReasonAdaptive, Until: 6*s + 500*ms}),
		)},
		{Name: "a rate that held in bursts, refused off trial, is cut without a pause", Steps: learnTwo(
			acq(2*s, "f", Want{Grant: true, Probe: true}),
			rel(2*s, "f", ok(), Want{Learned: &Quota{Q: 3, W: s}}),
			acq(2*s, "g", Want{Grant: true}),
			rel(2*s, "g", ok(), Want{}),
			acq(2*s, "h", Want{Grant: true}),
			rel(2*s, "h", ok(), Want{}),
			acq(2*s, "i", Want{Hold: control.ReasonAdaptive, Until: 3 * s}),
			acq(3*s, "i", Want{Grant: true, Probe: true}),
			rel(3*s, "i", ok(), Want{}),
			acq(3*s, "j", Want{Grant: true}),
			rel(3*s, "j", ok(), Want{}),
			acq(3*s, "k", Want{Grant: true}),
			// The rate step, on trial until 6s.
			rel(3*s, "k", ok(), Want{Learned: &Quota{Q: 3, W: 750 * ms}}),
			acq(3*s, "l", Want{Hold: control.ReasonAdaptive, Until: 3*s + 750*ms}),
			acq(3*s+750*ms, "l", Want{Grant: true, Probe: true}),
			rel(3*s+750*ms, "l", ok(), Want{}),
			acq(3*s+750*ms, "m", Want{Grant: true}),
			rel(3*s+750*ms, "m", ok(), Want{}),
			acq(3*s+750*ms, "n", Want{Grant: true}),
			rel(3*s+750*ms, "n", ok(), Want{}),
			acq(3*s+750*ms, "o", Want{Hold: control.ReasonAdaptive, Until: 4*s + 500*ms}),
			acq(4*s+500*ms, "o", Want{Grant: true, Probe: true}),
			rel(4*s+500*ms, "o", ok(), Want{}),
			acq(4*s+500*ms, "q", Want{Grant: true}),
			rel(4*s+500*ms, "q", ok(), Want{}),
			acq(4*s+500*ms, "r", Want{Grant: true}),
			rel(4*s+500*ms, "r", ok(), Want{}),
			acq(4*s+500*ms, "t", Want{Hold: control.ReasonAdaptive, Until: 5*s + 250*ms}),
			acq(5*s+250*ms, "t", Want{Grant: true, Probe: true}),
			rel(5*s+250*ms, "t", ok(), Want{}),
			acq(5*s+250*ms, "t2", Want{Grant: true}),
			rel(5*s+250*ms, "t2", ok(), Want{}),
			acq(5*s+250*ms, "t3", Want{Grant: true}),
			rel(5*s+250*ms, "t3", ok(), Want{}),
			acq(5*s+250*ms, "t4", Want{Hold: control.ReasonAdaptive, Until: 6 * s}),
			acq(6*s, "t4", Want{Grant: true, Probe: true}),
			rel(6*s, "t4", ok(), Want{}),
			acq(6*s, "t5", Want{Grant: true}),
			rel(6*s, "t5", ok(), Want{}),
			acq(6*s, "t6", Want{Grant: true}),
			// The rate step held: the burst grows, on trial.
			rel(6*s, "t6", ok(), Want{Learned: &Quota{Q: 4, W: 750 * ms}}),
			acq(6*s, "t7", Want{Grant: true}),
			// Refused on trial: undone, no pause; the burst is the
			// server's, and the rate step is taken from the refusal.
			rel(6*s, "t7", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 3, W: 562500 * 1000}}),
			acq(6*s, "t8", Want{Hold: control.ReasonAdaptive, Until: 6*s + 562500*1000}),
			// Refused on trial after an acceptance: undone, and the
			// rate step is pinned (half way would add less than a
			// request a window).
			acq(6*s+562500*1000, "t8", Want{Grant: true, Probe: true}),
			rel(6*s+562500*1000, "t8", ok(), Want{}),
			acq(6*s+562500*1000, "t9", Want{Grant: true}),
			rel(6*s+562500*1000, "t9", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 3, W: 750 * ms}}),
			acq(6*s+562500*1000, "u1", Want{Hold: control.ReasonAdaptive, Until: 6*s + 750*ms}),
			// Refused off trial, after an acceptance in its burst: the
			// rate held since it was measured (3 per 750ms, for 3s),
			// so this refusal is the rate's, not a window spent at
			// once: it is cut by a quarter, 3 per 1s, without a pause
			// or a measurement.
			acq(6*s+750*ms, "u1", Want{Grant: true}),
			rel(6*s+750*ms, "u1", ok(), Want{}),
			acq(6*s+750*ms, "u2", Want{Grant: true}),
			rel(6*s+750*ms, "u2", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 3, W: s}}),
		)},
		{Name: "a rate step is pinned when half way to the window refused adds less than a request a window", Steps: learnRateRefused(
			// 3 per 1s held, 3 per 750ms refused: half way, 3 per
			// 875ms, adds 3/7 of a request a window, which one window
			// cannot tell too fast. The rate step is pinned: two
			// learned windows on, the burst grows, and once it held,
			// the burst again, not the rate.
			acq(6*s+500*ms, "y", Want{Grant: true, Probe: true}),
			rel(6*s+500*ms, "y", ok(), Want{}),
			acq(6*s+500*ms, "a1", Want{Grant: true}),
			rel(6*s+500*ms, "a1", ok(), Want{}),
			acq(6*s+500*ms, "a2", Want{Grant: true}),
			rel(6*s+500*ms, "a2", ok(), Want{}),
			acq(6*s+500*ms, "a3", Want{Hold: control.ReasonAdaptive, Until: 7*s + 500*ms}),
			acq(7*s+500*ms, "a3", Want{Grant: true, Probe: true}),
			rel(7*s+500*ms, "a3", ok(), Want{Learned: &Quota{Q: 4, W: s}}),
			acq(7*s+500*ms, "b1", Want{Grant: true}),
			rel(7*s+500*ms, "b1", ok(), Want{}),
			acq(7*s+500*ms, "b2", Want{Grant: true}),
			rel(7*s+500*ms, "b2", ok(), Want{}),
			acq(7*s+500*ms, "b3", Want{Grant: true}),
			rel(7*s+500*ms, "b3", ok(), Want{}),
			acq(7*s+500*ms, "b4", Want{Hold: control.ReasonAdaptive, Until: 8*s + 500*ms}),
			acq(8*s+500*ms, "b4", Want{Grant: true, Probe: true}),
			rel(8*s+500*ms, "b4", ok(), Want{}),
			acq(8*s+500*ms, "c1", Want{Grant: true}),
			rel(8*s+500*ms, "c1", ok(), Want{}),
			acq(8*s+500*ms, "c2", Want{Grant: true}),
			rel(8*s+500*ms, "c2", ok(), Want{}),
			acq(8*s+500*ms, "c3", Want{Grant: true}),
			rel(8*s+500*ms, "c3", ok(), Want{Learned: &Quota{Q: 5, W: s}}),
		)},
	}
}

// learnRateRefused returns the steps of the table "a rate step stays on
// trial until the server's burst would be spent": 3 per 1s learned, the
// burst step holds, the rate step to 3 per 750ms holds two windows and is
// refused on trial at 5.25s, and undone; then the next window at 5.5s,
// followed by more.
func learnRateRefused(more ...Step) []Step {
	return learnTwo(append([]Step{
		// The burst grows by one, and holds once a window begun
		// after it is accepted whole.
		acq(2*s, "f", Want{Grant: true, Probe: true}),
		rel(2*s, "f", ok(), Want{Learned: &Quota{Q: 3, W: s}}),
		acq(2*s, "g", Want{Grant: true}),
		rel(2*s, "g", ok(), Want{}),
		acq(2*s, "h", Want{Grant: true}),
		rel(2*s, "h", ok(), Want{}),
		acq(2*s, "i", Want{Hold: control.ReasonAdaptive, Until: 3 * s}),
		acq(3*s, "i", Want{Grant: true, Probe: true}),
		rel(3*s, "i", ok(), Want{}),
		acq(3*s, "j", Want{Grant: true}),
		rel(3*s, "j", ok(), Want{}),
		acq(3*s, "k", Want{Grant: true}),
		// It held: the rate grows, w by a quarter. The server's
		// burst is 3 at most so far, spent at 3 per 0.75s against
		// 3 per 1s in 3s: the step is on trial until 6s.
		rel(3*s, "k", ok(), Want{Learned: &Quota{Q: 3, W: 750 * ms}}),
		acq(3*s, "l", Want{Hold: control.ReasonAdaptive, Until: 3*s + 750*ms}),
		acq(3*s+750*ms, "l", Want{Grant: true, Probe: true}),
		rel(3*s+750*ms, "l", ok(), Want{}),
		acq(3*s+750*ms, "m", Want{Grant: true}),
		rel(3*s+750*ms, "m", ok(), Want{}),
		acq(3*s+750*ms, "n", Want{Grant: true}),
		rel(3*s+750*ms, "n", ok(), Want{}),
		acq(3*s+750*ms, "o", Want{Hold: control.ReasonAdaptive, Until: 4*s + 500*ms}),
		acq(4*s+500*ms, "o", Want{Grant: true, Probe: true}),
		rel(4*s+500*ms, "o", ok(), Want{}),
		acq(4*s+500*ms, "q", Want{Grant: true}),
		rel(4*s+500*ms, "q", ok(), Want{}),
		acq(4*s+500*ms, "r", Want{Grant: true}),
		rel(4*s+500*ms, "r", ok(), Want{}),
		acq(4*s+500*ms, "t", Want{Hold: control.ReasonAdaptive, Until: 5*s + 250*ms}),
		// Two windows accepted whole at the faster rate, and then
		// a refusal, before 6s: the step's still, not the learned
		// quota's. It is undone without a pause.
		acq(5*s+250*ms, "t", Want{Grant: true, Probe: true}),
		rel(5*s+250*ms, "t", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 3, W: s}}),
		// The refused request counts against the window it
		// overdrew, begun at 4.5s: the next begins at 5.5s, with
		// the whole quota.
		acq(5*s+250*ms, "u", Want{Hold: control.ReasonAdaptive, Until: 5*s + 500*ms}),
		acq(5*s+500*ms, "u", Want{Grant: true, Probe: true}),
		rel(5*s+500*ms, "u", ok(), Want{}),
		acq(5*s+500*ms, "v", Want{Grant: true}),
		rel(5*s+500*ms, "v", ok(), Want{}),
		acq(5*s+500*ms, "w", Want{Grant: true}),
		rel(5*s+500*ms, "w", ok(), Want{}),
		acq(5*s+500*ms, "y", Want{Hold: control.ReasonAdaptive, Until: 6*s + 500*ms}),
	}, more...)...)
}

// backoffPlan is the plan of a bare refusal's retry: the 1s floor, the
// key paused for pause.
func backoffPlan(pause time.Duration) *control.Plan {
	return &control.Plan{Wait: s, Pause: pause, Reason: control.ReasonBackoff, Retry: true}
}

// statedProbe is slowProbe for a key whose probe's answer states a quota
// with plenty left: its bare refusals are not read as refusals of no
// rate (see shed.go), and pause it at once.
func statedProbe() []Step {
	return []Step{
		acq(-200*ms, "p", Want{Grant: true, Probe: true}),
		rel(0, "p", ok(rl(100, 60*s, 90, 60*s)), Want{}),
	}
}

// learnTwo returns the steps that learn 2 per 1s (two accepted, then a
// refusal; accepted again 1s later) and run the first learned window with
// the quota holding requests back, f held until 2s, when the first step of
// growth is due, followed by more.
func learnTwo(more ...Step) []Step {
	return append([]Step{
		acq(0, "p", Want{Grant: true, Probe: true}),
		rel(0, "p", ok(), Want{}),
		acq(0, "a", Want{Grant: true}),
		rel(0, "a", ok(), Want{}),
		acq(0, "x", Want{Grant: true}),
		rel(0, "x", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: s}),
		acq(s, "b", Want{Grant: true, Probe: true}),
		rel(s, "b", ok(), Want{Learned: &Quota{Q: 2, W: s}}),
		acq(s, "c", Want{Grant: true}),
		rel(s, "c", ok(), Want{}),
		acq(s, "f", Want{Hold: control.ReasonAdaptive, Until: 2 * s}),
	}, more...)
}

// learnEven returns the steps that learn 4 per 1s and then see its first
// learned burst refused at 1s, after two acceptances (the probe that ended
// the measurement, and one more), before any step of growth, followed by
// more.
func learnEven(more ...Step) []Step {
	return append([]Step{
		acq(0, "p", Want{Grant: true, Probe: true}),
		rel(0, "p", ok(), Want{}),
		acq(0, "a", Want{Grant: true}),
		rel(0, "a", ok(), Want{}),
		acq(0, "b", Want{Grant: true}),
		rel(0, "b", ok(), Want{}),
		acq(0, "c", Want{Grant: true}),
		rel(0, "c", ok(), Want{}),
		acq(0, "x", Want{Grant: true}),
		rel(0, "x", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: s}),
		acq(s, "h", Want{Grant: true, Probe: true}),
		rel(s, "h", ok(), Want{Learned: &Quota{Q: 4, W: s}}),
		acq(s, "i", Want{Grant: true}),
		rel(s, "i", ok(), Want{}),
		acq(s, "j", Want{Grant: true}),
		// The burst refused, the first refusal of the learned quota:
		// it is paced evenly at the same rate, on trial; the key is
		// not paused, and only the refused request waits its floor.
		rel(s, "j", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 4, W: s}}),
	}, more...)
}

// learnEvenRefused returns the steps of learnEven, then the even pace
// refused in the burst's own cycle, the key back in bursts, measured again
// as 2 per 1s at 2s, and n held until the learned window begun there
// ends at 3s, followed by more.
func learnEvenRefused(more ...Step) []Step {
	return learnEven(append([]Step{
		// Refused in the burst's own cycle: the rate was too high.
		// The key pauses as if from the burst refused (the floor
		// from 1s), so that the trial shifts neither the window
		// measured nor the key's phase; the refused request still
		// waits its own floor.
		acq(s+250*ms, "k", Want{Grant: true}),
		rel(s+250*ms, "k", refused(bare(4*s)), Want{Plan: &control.Plan{Wait: s, Pause: 750 * ms, Reason: control.ReasonBackoff, Retry: true}, PauseUntil: 2 * s}),
		// q halves (two accepted in the cycle refused), w as
		// measured from the cycle's start, and the key sends in
		// bursts again.
		acq(2*s, "l", Want{Grant: true, Probe: true}),
		rel(2*s, "l", ok(), Want{Learned: &Quota{Q: 2, W: s}}),
		acq(2*s, "m", Want{Grant: true}),
		rel(2*s, "m", ok(), Want{}),
		acq(2*s, "n", Want{Hold: control.ReasonAdaptive, Until: 3 * s}),
	}, more...)...)
}

// learnRate returns the steps of learnEven, then a whole learned window
// at the even pace (4 per 1s, a rate from then on), a rate step that
// holds for its window (4 per 750ms), and the next (4 per 375ms) refused
// on trial and undone at 3.59s, with a margin (4 per 937.5ms), followed by
// more.
func learnRate(more ...Step) []Step {
	steps := learnEven(
		acq(s+250*ms, "k", Want{Grant: true}),
		rel(s+250*ms, "k", ok(), Want{}),
		acq(s+250*ms, "l", Want{Hold: control.ReasonAdaptive, Until: s + 500*ms}),
		acq(s+500*ms, "l", Want{Grant: true}),
		rel(s+500*ms, "l", ok(), Want{}),
		acq(s+500*ms, "i2", Want{Hold: control.ReasonAdaptive, Until: s + 750*ms}),
		acq(s+750*ms, "i2", Want{Grant: true}),
		rel(s+750*ms, "i2", ok(), Want{}),
		acq(s+750*ms, "j2", Want{Hold: control.ReasonAdaptive, Until: 2 * s}),
		acq(2*s, "j2", Want{Grant: true, Probe: true}),
		rel(2*s, "j2", ok(), Want{}),
		acq(2*s, "m", Want{Hold: control.ReasonAdaptive, Until: 2*s + 250*ms}),
		acq(2*s+250*ms, "m", Want{Grant: true}),
		rel(2*s+250*ms, "m", ok(), Want{}),
		acq(2*s+250*ms, "n", Want{Hold: control.ReasonAdaptive, Until: 2*s + 500*ms}),
		acq(2*s+500*ms, "n", Want{Grant: true}),
		rel(2*s+500*ms, "n", ok(), Want{}),
		acq(2*s+500*ms, "o", Want{Hold: control.ReasonAdaptive, Until: 2*s + 750*ms}),
		acq(2*s+750*ms, "o", Want{Grant: true}),
		rel(2*s+750*ms, "o", ok(), Want{Learned: &Quota{Q: 4, W: 750 * ms}}),
		// The step's window, accepted whole: it holds at once (a
		// refusal off trial no longer costs a measurement, so it is
		// not kept on trial until a bucket's burst would be spent).
		acq(2*s+750*ms, "t", Want{Hold: control.ReasonAdaptive, Until: 2*s + 9375*ms/10}),
		acq(2*s+9375*ms/10, "t", Want{Grant: true, Probe: true}),
		rel(2*s+9375*ms/10, "t", ok(), Want{}),
		acq(2*s+9375*ms/10, "u", Want{Hold: control.ReasonAdaptive, Until: 3*s + 125*ms}),
		acq(3*s+125*ms, "u", Want{Grant: true}),
		rel(3*s+125*ms, "u", ok(), Want{}),
		acq(3*s+125*ms, "v", Want{Hold: control.ReasonAdaptive, Until: 3*s + 3125*ms/10}),
		acq(3*s+3125*ms/10, "v", Want{Grant: true}),
		rel(3*s+3125*ms/10, "v", ok(), Want{}),
		acq(3*s+3125*ms/10, "w", Want{Hold: control.ReasonAdaptive, Until: 3*s + 500*ms}),
		acq(3*s+500*ms, "w", Want{Grant: true}),
		rel(3*s+500*ms, "w", ok(), Want{Learned: &Quota{Q: 4, W: 375 * ms}}),
		// The next, twice as long, refused on trial: undone, the
		// floor at 375ms, and the rate that held restored with a
		// margin, a request a window (250ms) but no more than half
		// the step refused: 4 per 937.5ms.
		acq(3*s+500*ms, "x", Want{Hold: control.ReasonAdaptive, Until: 3*s + 59375*ms/100}),
		acq(3*s+59375*ms/100, "x", Want{Grant: true, Probe: true}),
		rel(3*s+59375*ms/100, "x", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 4, W: 937500 * time.Microsecond}}),
	)
	return append(steps, more...)
}

// learnHalved returns the steps that learn 8 per 1s, see its first learned
// burst refused at 1s after the probe alone (the probe that ended the
// measurement), then the even pace refused too, and back off: one
// multiplicative decrease halves q, as a cycle measured out of phase may
// count few: 4 per 1s at 2s, its probe accepted.
func learnHalved(more ...Step) []Step {
	steps := []Step{
		acq(0, "p", Want{Grant: true, Probe: true}),
		rel(0, "p", ok(), Want{}),
	}
	for i := range 7 {
		name := fmt.Sprintf("a%d", i)
		steps = append(steps, acq(0, name, Want{Grant: true}), rel(0, name, ok(), Want{}))
	}
	steps = append(steps,
		acq(0, "x", Want{Grant: true}),
		rel(0, "x", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: s}),
	)
	return append(append(steps,
		// The burst refused after its probe: paced evenly, on trial.
		acq(s, "h", Want{Grant: true, Probe: true}),
		rel(s, "h", ok(), Want{Learned: &Quota{Q: 8, W: s}}),
		acq(s, "j", Want{Grant: true}),
		rel(s, "j", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 8, W: s}}),
		// The even pace refused: back off, measured from the burst.
		acq(s+125*ms, "k", Want{Grant: true}),
		rel(s+125*ms, "k", refused(bare(4*s)), Want{PauseUntil: 2 * s}),
		// One acceptance counted, out of 8: q halves, no further.
		acq(2*s, "l", Want{Grant: true, Probe: true}),
		rel(2*s, "l", ok(), Want{Learned: &Quota{Q: 4, W: s}}),
	), more...)
}

// learnEight returns the steps of learnHalved, then the burst after the
// probe refused again and measured: the second decrease, which counts no
// more than the first, is trusted in full.
func learnEight() []Step {
	return append(learnHalved(),
		// Refused again after the probe alone.
		acq(2*s, "m", Want{Grant: true}),
		rel(2*s, "m", refused(bare(4*s)), Want{PauseUntil: 3 * s}),
		// One acceptance counted again: no more than the decrease
		// before, so not out of phase: q is what it counted.
		acq(3*s, "n", Want{Grant: true, Probe: true}),
		rel(3*s, "n", ok(), Want{Learned: &Quota{Q: 1, W: s}}),
		acq(3*s, "o", Want{Hold: control.ReasonAdaptive, Until: 4 * s}),
	)
}

// learnBurstRefused returns the steps of learnTwo (2 per 1s learned)
// followed by its first step, a burst step, refused on trial at 2s: it is
// undone without a pause, and the rate step is taken from the refusal,
// when the server had nothing left (2 per 750ms, on trial for one
// window); then more.
func learnBurstRefused(more ...Step) []Step {
	return learnTwo(append([]Step{
		// One learned window with the quota holding requests back
		// since the first measurement: the first step, the burst
		// grows by one, on trial.
		acq(2*s, "f", Want{Grant: true, Probe: true}),
		rel(2*s, "f", ok(), Want{Learned: &Quota{Q: 3, W: s}}),
		acq(2*s, "i", Want{Grant: true}),
		rel(2*s, "i", ok(), Want{}),
		acq(2*s, "j", Want{Grant: true}),
		// The step overdrew: it is undone at once, and only the
		// refused request waits the floor; the key is not paused. The
		// burst is the server's, and the server had nothing left: the
		// rate step is taken from here, 2 per 750ms.
		rel(2*s, "j", refused(bare(4*s)), Want{Plan: backoffPlan(0), PauseUntil: -1, Learned: &Quota{Q: 2, W: 750 * ms}}),
		// The quota paces the key; the refused request waits its
		// floor, for the refusal's reason.
		Step{At: 2 * s, Acquire: "j", After: 3 * s, AfterReason: control.ReasonBackoff, Want: Want{Hold: control.ReasonBackoff, Until: 3 * s}},
		acq(2*s, "k", Want{Hold: control.ReasonAdaptive, Until: 2*s + 750*ms}),
	}, more...)...)
}
