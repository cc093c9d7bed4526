package controltest

import (
	"time"

	"github.com/politehttp/polite/internal/control"
)

// learnTables are the rules of the learner's growth and decrease.
func learnTables() []Table {
	backoff := func(pause time.Duration) *control.Plan {
		return &control.Plan{Wait: s, Pause: pause, Reason: control.ReasonBackoff, Retry: true}
	}
	return []Table{
		{Name: "a refused step of growth is undone without a pause", Steps: []Step{
			// Learn 2 per 1s: two accepted, then a refusal; accepted
			// again 1s later.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			acq(0, "a", Want{Grant: true}),
			rel(0, "a", ok(), Want{}),
			acq(0, "x", Want{Grant: true}),
			rel(0, "x", refused(bare(4*s)), Want{Plan: backoff(s), PauseUntil: s}),
			acq(s, "d", Want{Grant: true, Probe: true}),
			rel(s, "d", ok(), Want{Learned: &Quota{Q: 2, W: s}}),
			acq(s, "e", Want{Grant: true}),
			rel(s, "e", ok(), Want{}),
			acq(s, "f", Want{Hold: control.ReasonAdaptive, Until: 2 * s}),
			// Two learned windows with the quota holding requests back:
			// the burst grows by one, on trial.
			acq(2*s, "f", Want{Grant: true, Probe: true}),
			rel(2*s, "f", ok(), Want{}),
			acq(2*s, "g", Want{Grant: true}),
			rel(2*s, "g", ok(), Want{}),
			acq(2*s, "h", Want{Hold: control.ReasonAdaptive, Until: 3 * s}),
			acq(3*s, "h", Want{Grant: true, Probe: true}),
			rel(3*s, "h", ok(), Want{Learned: &Quota{Q: 3, W: s}}),
			acq(3*s, "i", Want{Grant: true}),
			acq(3*s, "j", Want{Grant: true}),
			// The step overdrew: it is undone at once, and only the
			// refused request waits the floor; the key is not paused.
			rel(3*s, "j", refused(bare(4*s)), Want{Plan: backoff(0), PauseUntil: -1, Learned: &Quota{Q: 2, W: s}}),
			// One more refusal of the same overdraw changes nothing.
			rel(3*s, "i", refused(bare(4*s)), Want{Plan: backoff(0), PauseUntil: -1, Learned: &Quota{Q: 2, W: s}}),
			// The quota that held paces the key.
			acq(3*s, "k", Want{Hold: control.ReasonAdaptive, Until: 4 * s}),
			// A refusal once the step is undone is the learned quota's:
			// the key pauses (a lone probe refused: its own backoff),
			// and measures again.
			acq(4*s, "k", Want{Grant: true, Probe: true}),
			rel(4*s, "k", refused(bare(4*s)), Want{Plan: &control.Plan{Wait: 4 * s, Pause: 4 * s, Reason: control.ReasonBackoff, Retry: true}, PauseUntil: 8 * s}),
		}},
		{Name: "the window is sized by the rate sampled between refusals", Steps: []Step{
			// 8 accepted at once, then a refusal, and an acceptance a
			// second later: 8 per 1s.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			acq(0, "a", Want{Grant: true}), rel(0, "a", ok(), Want{}),
			acq(0, "b", Want{Grant: true}), rel(0, "b", ok(), Want{}),
			acq(0, "c", Want{Grant: true}), rel(0, "c", ok(), Want{}),
			acq(0, "d", Want{Grant: true}), rel(0, "d", ok(), Want{}),
			acq(0, "e", Want{Grant: true}), rel(0, "e", ok(), Want{}),
			acq(0, "f", Want{Grant: true}), rel(0, "f", ok(), Want{}),
			acq(0, "g", Want{Grant: true}), rel(0, "g", ok(), Want{}),
			acq(0, "x", Want{Grant: true}),
			rel(0, "x", refused(bare(4*s)), Want{Plan: backoff(s), PauseUntil: s}),
			acq(s, "h", Want{Grant: true, Probe: true}),
			rel(s, "h", ok(), Want{Learned: &Quota{Q: 8, W: s}}),
			// Only two more accepted in the second since the server
			// was spent: it frees 2 a second, a bucket that was full,
			// not a window of 8.
			acq(s, "i", Want{Grant: true}),
			rel(s, "i", ok(), Want{}),
			acq(s, "j", Want{Grant: true}),
			rel(s, "j", refused(bare(4*s)), Want{Plan: backoff(s), PauseUntil: 2 * s}),
			// The burst halves at most; the window is what 2 a second
			// gives it: 4 per 2s, where halving alone would keep 4 per
			// 1s.
			acq(2*s, "k", Want{Grant: true, Probe: true}),
			rel(2*s, "k", ok(), Want{Learned: &Quota{Q: 4, W: 2 * s}}),
		}},
	}
}
