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
			// The quota that held paces the key; the refused request
			// waits its floor, for the refusal's reason.
			{At: 3 * s, Acquire: "j", After: 4 * s, AfterReason: control.ReasonBackoff, Want: Want{Hold: control.ReasonBackoff, Until: 4 * s}},
			acq(3*s, "k", Want{Hold: control.ReasonAdaptive, Until: 4 * s}),
			// A refusal once the step is undone is the learned quota's:
			// the key pauses (a lone probe refused: its own backoff),
			// and measures again.
			acq(4*s, "k", Want{Grant: true, Probe: true}),
			rel(4*s, "k", refused(bare(4*s)), Want{Plan: &control.Plan{Wait: 4 * s, Pause: 4 * s, Reason: control.ReasonBackoff, Retry: true}, PauseUntil: 8 * s}),
		}},
		{Name: "a rate step stays on trial until the server's burst would be spent", Steps: []Step{
			// Learn 2 per 1s, as above.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			acq(0, "a", Want{Grant: true}),
			rel(0, "a", ok(), Want{}),
			acq(0, "x", Want{Grant: true}),
			rel(0, "x", refused(bare(4*s)), Want{Plan: backoff(s), PauseUntil: s}),
			acq(s, "b", Want{Grant: true, Probe: true}),
			rel(s, "b", ok(), Want{Learned: &Quota{Q: 2, W: s}}),
			acq(s, "c", Want{Grant: true}),
			rel(s, "c", ok(), Want{}),
			acq(s, "d", Want{Hold: control.ReasonAdaptive, Until: 2 * s}),
			acq(2*s, "d", Want{Grant: true, Probe: true}),
			rel(2*s, "d", ok(), Want{}),
			acq(2*s, "e", Want{Grant: true}),
			rel(2*s, "e", ok(), Want{}),
			acq(2*s, "f", Want{Hold: control.ReasonAdaptive, Until: 3 * s}),
			// The burst grows by one, and holds once a window begun
			// after it is accepted whole.
			acq(3*s, "f", Want{Grant: true, Probe: true}),
			rel(3*s, "f", ok(), Want{Learned: &Quota{Q: 3, W: s}}),
			acq(3*s, "g", Want{Grant: true}),
			rel(3*s, "g", ok(), Want{}),
			acq(3*s, "h", Want{Grant: true}),
			rel(3*s, "h", ok(), Want{}),
			acq(3*s, "i", Want{Hold: control.ReasonAdaptive, Until: 4 * s}),
			acq(4*s, "i", Want{Grant: true, Probe: true}),
			rel(4*s, "i", ok(), Want{}),
			acq(4*s, "j", Want{Grant: true}),
			rel(4*s, "j", ok(), Want{}),
			acq(4*s, "k", Want{Grant: true}),
			// It held: the rate grows, w by a quarter. The server's
			// burst is 3 at most so far, spent at 3 per 0.75s against
			// 3 per 1s in 3s: the step is on trial until 7s.
			rel(4*s, "k", ok(), Want{Learned: &Quota{Q: 3, W: 750 * ms}}),
			acq(4*s, "l", Want{Hold: control.ReasonAdaptive, Until: 4*s + 750*ms}),
			acq(4*s+750*ms, "l", Want{Grant: true, Probe: true}),
			rel(4*s+750*ms, "l", ok(), Want{}),
			acq(4*s+750*ms, "m", Want{Grant: true}),
			rel(4*s+750*ms, "m", ok(), Want{}),
			acq(4*s+750*ms, "n", Want{Grant: true}),
			rel(4*s+750*ms, "n", ok(), Want{}),
			acq(4*s+750*ms, "o", Want{Hold: control.ReasonAdaptive, Until: 5*s + 500*ms}),
			acq(5*s+500*ms, "o", Want{Grant: true, Probe: true}),
			rel(5*s+500*ms, "o", ok(), Want{}),
			acq(5*s+500*ms, "q", Want{Grant: true}),
			rel(5*s+500*ms, "q", ok(), Want{}),
			acq(5*s+500*ms, "r", Want{Grant: true}),
			rel(5*s+500*ms, "r", ok(), Want{}),
			acq(5*s+500*ms, "t", Want{Hold: control.ReasonAdaptive, Until: 6*s + 250*ms}),
			// Two windows accepted whole at the faster rate, and then
			// a refusal, before 7s: the step's still, not the learned
			// quota's. It is undone without a pause.
			acq(6*s+250*ms, "t", Want{Grant: true, Probe: true}),
			rel(6*s+250*ms, "t", refused(bare(4*s)), Want{Plan: backoff(0), PauseUntil: -1, Learned: &Quota{Q: 3, W: s}}),
			// The refused request counts against the window it
			// overdrew, begun at 5.5s: the next begins at 6.5s, with
			// the whole quota.
			acq(6*s+250*ms, "u", Want{Hold: control.ReasonAdaptive, Until: 6*s + 500*ms}),
			acq(6*s+500*ms, "u", Want{Grant: true, Probe: true}),
			rel(6*s+500*ms, "u", ok(), Want{}),
			acq(6*s+500*ms, "v", Want{Grant: true}),
			acq(6*s+500*ms, "w", Want{Grant: true}),
			acq(6*s+500*ms, "y", Want{Hold: control.ReasonAdaptive, Until: 7*s + 500*ms}),
		}},
	}
}
