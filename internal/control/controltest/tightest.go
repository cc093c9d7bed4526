package controltest

import (
	"time"

	"github.com/politehttp/polite/internal/control"
)

// tightestTables show how a window spent ends when its answers state its
// reset in whole seconds rounded up, each up to a second late: at the
// earliest reset its answers stated, unless the reset moved by a second
// or more, the window turned, or a refusal came between.
func tightestTables() []Table {
	// A window of 3 ending at 4s, answered at 0s (t=4: by 4s) and, its
	// body streamed, at 1.2s (t=3: by 4.2s).
	window := []Step{
		acq(0, "p", Want{Grant: true, Probe: true}),
		rel(0, "p", ok(rl(3, 0, 2, 4*s)), Want{PauseUntil: -1}),
		acq(0, "a", Want{Grant: true}),
	}
	steps := func(more ...Step) []Step { return append(append([]Step(nil), window...), more...) }
	return []Table{
		{Name: "a window spent ends at the earliest reset its answers stated", Steps: steps(
			rel(600*ms, "a", ok(rl(3, 0, 1, 4*s)), Want{}),
			acq(600*ms, "b", Want{Grant: true}),
			// Stated at 4.2s, rounded up as the answers before it
			// were: they bound the end by 4s.
			rel(1200*ms, "b", ok(rl(3, 0, 0, 3*s)), Want{PauseUntil: 4 * s, PauseReason: control.ReasonQuota}),
			acq(4*s, "c", Want{Grant: true, Probe: true}),
		)},
		{Name: "a reset that moves by a second or more is read as stated", Steps: steps(
			// A bucket's, refilled only when full: 5.2s, a second
			// and more after the 4s stated before.
			rel(1200*ms, "a", ok(rl(3, 0, 0, 4*s)), Want{PauseUntil: 5200 * ms, PauseReason: control.ReasonQuota}),
		)},
		{Name: "an answer with more left than the one before starts a window", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(3, 0, 1, 4*s)), Want{PauseUntil: -1}),
			acq(0, "a", Want{Grant: true}),
			// Before the 4s stated, 2 left, by 4.5s: the window
			// turned, and what the one before stated bounds no end
			// of this one.
			rel(3500*ms, "a", ok(rl(3, 0, 2, s)), Want{}),
			acq(3500*ms, "b", Want{Grant: true}),
			acq(3500*ms, "c", Want{Grant: true}),
			rel(3600*ms, "b", ok(rl(3, 0, 1, s)), Want{}),
			rel(3600*ms, "c", ok(rl(3, 0, 0, s)), Want{PauseUntil: 4500 * ms, PauseReason: control.ReasonQuota}),
		}},
		{Name: "the window after a refusal ends by its own answers", Steps: steps(
			rel(600*ms, "a", refused(bare(time.Second), rl(3, 0, 0, 4*s)), Want{PauseUntil: 4600 * ms, PauseReason: control.ReasonQuota}),
			acq(4600*ms, "b", Want{Grant: true, Probe: true}),
			rel(4700*ms, "b", ok(rl(3, 0, 1, 4*s)), Want{PauseUntil: -1}),
			acq(4700*ms, "c", Want{Grant: true}),
			rel(5200*ms, "c", ok(rl(3, 0, 0, 3900*ms)), Want{PauseUntil: 8700 * ms, PauseReason: control.ReasonQuota}),
		)},
	}
}
