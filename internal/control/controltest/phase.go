package controltest

import (
	"time"

	"github.com/politehttp/polite/internal/control"
)

// phaseTables returns the tables of how a one-second window whose reset is
// stated late is found (DESIGN.md, "whole-second resets"): a legacy quota
// of 3 requests, its resets stated as instants on whole seconds.
func phaseTables() []Table {
	// A second, less twice the most jitter of a pause and two round
	// trips of the key (a nanosecond, the least measured: the answers
	// of these tables come at once).
	const lead = 980*time.Millisecond - 2
	// skipped is the start the tables share: a window stated to reset at
	// 1s, and the next one, after the pause, at 3s, two seconds later.
	skipped := []Step{
		acq(0, "p", Want{Grant: true, Probe: true}),
		rel(0, "p", ok(rl(3, 0, 2, 1*s)), Want{}),
		acq(0, "a", Want{Grant: true}),
		acq(0, "b", Want{Grant: true}),
		rel(0, "a", ok(rl(3, 0, 1, 1*s)), Want{}),
		rel(0, "b", ok(rl(3, 0, 0, 1*s)), Want{PauseUntil: 1 * s, PauseReason: control.ReasonQuota}),
		acq(1*s, "c", Want{Grant: true, Probe: true}),
		rel(1*s, "c", ok(rl(3, 0, 2, 2*s)), Want{PauseUntil: -1}),
		acq(1*s, "d", Want{Grant: true}),
		rel(1*s, "d", ok(rl(3, 0, 1, 2*s)), Want{}),
		// The window's last request is the test: held until a little
		// less than a second before the stated reset, 3s.
		acq(1*s, "e", Want{Hold: control.ReasonQuota, Until: 3*s - lead}),
		acq(3*s-lead, "e", Want{Grant: true}),
	}
	steps := func(more ...Step) []Step { return append(append([]Step(nil), skipped...), more...) }
	return []Table{
		{Name: "a test counted in the next window reads the policy's resets earlier by the lead it proved", Steps: steps(
			// Counted in the next window, stated at 4s: that window
			// was open 980ms before the reset stated, 3s.
			rel(3*s-lead, "e", ok(rl(3, 0, 2, 1*s+lead)), Want{}),
			acq(3*s-lead, "f", Want{Grant: true}),
			acq(3*s-lead, "g", Want{Grant: true}),
			rel(3*s-lead, "f", ok(rl(3, 0, 1, 1*s+lead)), Want{}),
			// The window spent, the key pauses until its stated reset,
			// 4s, less the lead: 3.02s.
			rel(3*s-lead, "g", ok(rl(3, 0, 0, 1*s+lead)), Want{PauseUntil: 4*s - lead, PauseReason: control.ReasonQuota}),
			acq(4*s-lead, "h", Want{Grant: true, Probe: true}),
			rel(4*s-lead, "h", ok(rl(3, 0, 2, 1*s+lead)), Want{PauseUntil: -1}),
			// Windows stated a second apart: no test, no hold.
			acq(4*s-lead, "i", Want{Grant: true}),
			rel(4*s-lead, "i", ok(rl(3, 0, 1, 1*s+lead)), Want{}),
			acq(4*s-lead, "j", Want{Grant: true}),
			rel(4*s-lead, "j", ok(rl(3, 0, 0, 1*s+lead)), Want{PauseUntil: 5*s - lead, PauseReason: control.ReasonQuota}),
			// A window stated off the whole seconds of the one before
			// (the estimate of the server's clock moved) voids the
			// lead: its reset is read as stated.
			acq(5*s-lead, "k", Want{Grant: true, Probe: true}),
			rel(5*s-lead, "k", ok(rl(3, 0, 0, 1*s+lead+100*ms)), Want{PauseUntil: 6*s + 100*ms, PauseReason: control.ReasonQuota}),
		)},
		{Name: "a test counted in its own window ends the tests", Steps: steps(
			rel(3*s-lead, "e", ok(rl(3, 0, 0, lead)), Want{PauseUntil: 3 * s, PauseReason: control.ReasonQuota}),
			acq(3*s, "f", Want{Grant: true, Probe: true}),
			rel(3*s, "f", ok(rl(3, 0, 2, 2*s)), Want{PauseUntil: -1}),
			acq(3*s, "g", Want{Grant: true}),
			rel(3*s, "g", ok(rl(3, 0, 1, 2*s)), Want{}),
			// Stated two seconds apart again, but a test showed
			// nothing skipped: the last request goes at once.
			acq(3*s, "h", Want{Grant: true}),
		)},
		{Name: "a request sent in the lead and refused voids it", Steps: steps(
			rel(3*s-lead, "e", ok(rl(3, 0, 2, 1*s+lead)), Want{}),
			acq(3*s-lead, "f", Want{Grant: true}),
			acq(3*s-lead, "g", Want{Grant: true}),
			rel(3*s-lead, "f", ok(rl(3, 0, 1, 1*s+lead)), Want{}),
			rel(3*s-lead, "g", ok(rl(3, 0, 0, 1*s+lead)), Want{PauseUntil: 4*s - lead, PauseReason: control.ReasonQuota}),
			// The server's phase moved: the probe in the lead is refused,
			// the window stated at 4s not over.
			acq(4*s-lead, "h", Want{Grant: true, Probe: true}),
			rel(4*s-lead, "h", refused(bare(time.Second), rl(3, 0, 0, lead)), Want{}),
			// A window spent pauses the key until its stated reset,
			// and is not tested again.
			acq(5*s, "i", Want{Grant: true, Probe: true}),
			rel(5*s, "i", ok(rl(3, 0, 0, 1*s)), Want{PauseUntil: 6 * s, PauseReason: control.ReasonQuota}),
		)},
		{Name: "resets that do not fall whole seconds apart are not tested", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(3, 0, 0, 1*s)), Want{PauseUntil: 1 * s, PauseReason: control.ReasonQuota}),
			acq(1*s, "c", Want{Grant: true, Probe: true}),
			// Stated at 3.2s: 2.2s after the reset before, a delta
			// rounded to the second.
			rel(1300*ms, "c", ok(rl(3, 0, 2, 1900*ms)), Want{PauseUntil: -1}),
			acq(1300*ms, "d", Want{Grant: true}),
			rel(1300*ms, "d", ok(rl(3, 0, 1, 1900*ms)), Want{}),
			acq(1300*ms, "e", Want{Grant: true}),
		}},
	}
}
