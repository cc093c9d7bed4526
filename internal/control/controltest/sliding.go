package controltest

import (
	"slices"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// ietf is a draft-11 quota of the policy "default": q per w, r left
// within t.
func ietf(q int64, w time.Duration, r int64, t time.Duration) parse.Quota {
	return parse.Quota{Policy: "default", Unit: "requests", Limit: q, Window: w, Remaining: r, Reset: t, Dialect: "ietf"}
}

// sharedWindow is a window of 10 per 10s, from base, another client
// takes 6 of as it opens, seen by a key that reads it as a counter: its
// probe accepted with 3 left, three more paced, the last answered r=0,
// and d, which the mark's pace sends into the spent quota, refused. The
// names end in sfx.
func sharedWindow(base time.Duration, sfx string) []Step {
	steps := []Step{
		acq(base+20*ms, "q"+sfx, Want{Grant: true, Probe: true}),
		rel(base+120*ms, "q"+sfx, ok(ietf(10, 10*s, 3, 9880*ms)), Want{PauseUntil: -1}),
	}
	for k, n := range []string{"a", "b", "c"} {
		at := base + time.Duration(k+1)*s + time.Duration(200*(k+1))*ms
		steps = append(steps,
			acq(at, n+sfx, Want{Grant: true}),
			rel(at+100*ms, n+sfx, ok(ietf(10, 10*s, int64(2-k), 8700*ms-time.Duration(1200*k)*ms)), Want{}),
		)
	}
	return append(steps,
		acq(base+5*s, "d"+sfx, Want{Grant: true}),
		rel(base+5*s+100*ms, "d"+sfx, refused(retryAfter(4900*ms), ietf(10, 10*s, 0, 4900*ms)), Want{PauseReason: control.ReasonRetryAfter}),
	)
}

// slidingTables returns the tables of how a sliding-window counter is
// recognised without a refusal (DESIGN.md, "sliding-window counters").
func slidingTables() []Table {
	return []Table{
		{Name: "a probe accepted with little of q left marks a sliding-window counter", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(ietf(10, 4*s, 0, 1*s)), Want{PauseUntil: 1 * s, PauseReason: control.ReasonQuota}),
			// The probe sent at the stated reset is accepted with 2 of
			// 10 left: the previous window still weighs.
			acq(1*s, "b", Want{Grant: true, Probe: true}),
			rel(1*s+100*ms, "b", ok(ietf(10, 4*s, 2, 4*s)), Want{PauseUntil: -1}),
			// Paced from then on at one start per w/(q-1), 4s/9.
			acq(1*s+100*ms, "c", Want{Hold: control.ReasonPace, Until: 1*s + 4*s/9}),
			acq(1*s+4*s/9, "d", Want{Grant: true}),
			acq(1*s+4*s/9, "e", Want{Hold: control.ReasonPace, Until: 1*s + 8*s/9}),
		}},
		// A fixed window of 10 per 10s another client shares, taking 6 of
		// each window as it opens: the probe at the reset, accepted with
		// 3 left, reads as a counter's mark, and the key paced at q-1 a
		// window into the quota its r=0 stated spent, refused about once
		// a window for good. Three refusals in a row that r=0 foresaw, of
		// requests sent before its reset, refute the mark: the spent quota
		// holds to its reset again, and no acceptance marks it anew.
		{Name: "refusals that r=0 foresaw refute a counter's mark", Steps: slices.Concat([]Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(100*ms, "p", ok(ietf(10, 10*s, 0, 9900*ms)), Want{PauseUntil: 10 * s, PauseReason: control.ReasonQuota}),
			// Each window alike: its probe accepted with 3 left, its d,
			// which the mark sends into the spent quota, refused.
		}, sharedWindow(10*s, ""), sharedWindow(21*s, "2"), sharedWindow(32*s, "3"), []Step{
			// Refuted: the next window's probe, accepted with 3 left,
			// marks nothing, and its r=0 holds h to its reset.
			acq(43*s, "f", Want{Grant: true, Probe: true}),
			rel(43*s+100*ms, "f", ok(ietf(10, 10*s, 3, 9900*ms)), Want{PauseUntil: -1}),
			acq(43*s+200*ms, "g", Want{Grant: true}),
			rel(43*s+300*ms, "g", ok(ietf(10, 10*s, 0, 9700*ms)), Want{PauseReason: control.ReasonQuota}),
			acq(44*s, "h", Want{Hold: control.ReasonQuota}),
			// A probe refused at the stated reset with the next window's
			// marks it as a counter again, refuted or not: paced, its r=0
			// passed over (through the binary form too: both marks).
			acq(53*s+600*ms, "i", Want{Grant: true, Probe: true}),
			rel(53*s+700*ms, "i", refused(retryAfter(1*s), ietf(10, 10*s, 0, 9300*ms)), Want{}),
			acq(55*s, "j", Want{Grant: true, Probe: true}),
			rel(55*s+100*ms, "j", ok(ietf(10, 10*s, 0, 7900*ms)), Want{PauseUntil: -1}),
			acq(56*s+200*ms, "k", Want{Grant: true}),
		})},
		{Name: "a probe accepted with its quota back is a fixed window", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(ietf(10, 4*s, 0, 1*s)), Want{PauseUntil: 1 * s, PauseReason: control.ReasonQuota}),
			acq(1*s, "b", Want{Grant: true, Probe: true}),
			rel(1*s+100*ms, "b", ok(ietf(10, 4*s, 9, 4*s)), Want{PauseUntil: -1}),
			// No pacing beyond q per w: the rest of the window goes.
			acq(1*s+100*ms, "c", Want{Grant: true}),
			acq(1*s+100*ms, "d", Want{Grant: true}),
		}},
		{Name: "a refused probe at a reset already past, with a long Retry-After, marks a sliding-window counter", Steps: []Step{
			// A legacy quota of 20, no window stated, reset rounded down.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(20, 0, 0, 1*s)), Want{PauseUntil: 1 * s, PauseReason: control.ReasonQuota}),
			// The probe at the stated reset is refused: the reset is now
			// past, and Retry-After is the counter's window, 2s. A fixed
			// window rounded down would be back within a second.
			acq(1*s, "b", Want{Grant: true, Probe: true}),
			rel(1*s, "b", refused(retryAfter(2*s), rl(20, 0, 0, 0)), Want{PauseUntil: 3 * s, PauseReason: control.ReasonRetryAfter}),
			// After the pause, one probe, then one start per 2s/19.
			acq(3*s, "c", Want{Grant: true, Probe: true}),
			rel(3*s, "c", ok(rl(20, 0, 5, 2*s)), Want{}),
			acq(3*s, "d", Want{Hold: control.ReasonPace, Until: 3*s + 2*s/19}),
		}},
		{Name: "a refused probe at a reset already past, with a short Retry-After, is a fixed window rounded down", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(20, 0, 0, 1*s)), Want{PauseUntil: 1 * s, PauseReason: control.ReasonQuota}),
			acq(1*s, "b", Want{Grant: true, Probe: true}),
			rel(1*s, "b", refused(retryAfter(1*s), rl(20, 0, 0, 0)), Want{PauseReason: control.ReasonRetryAfter}),
			// Paused a second (and its jitter); then the window's quota
			// goes at once, unpaced.
			acq(2100*ms, "c", Want{Grant: true, Probe: true}),
			rel(2100*ms, "c", ok(rl(20, 0, 19, 2*s)), Want{}),
			acq(2100*ms, "d", Want{Grant: true}),
			acq(2100*ms, "e", Want{Grant: true}),
		}},
		{Name: "a legacy quota with little left is not read as a counter", Steps: []Step{
			// A legacy r may belong to another window, and its reset be
			// the time until a bucket is full.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(10, 4*s, 0, 1*s)), Want{PauseUntil: 1 * s, PauseReason: control.ReasonQuota}),
			acq(1*s, "b", Want{Grant: true, Probe: true}),
			rel(1*s+100*ms, "b", ok(rl(10, 4*s, 2, 4*s)), Want{PauseUntil: -1}),
			acq(1*s+100*ms, "c", Want{Grant: true}),
		}},
	}
}
