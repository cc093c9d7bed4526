package controltest

import (
	"time"

	"github.com/politehttp/polite/internal/control"
)

// firstTables returns the tables of how the end of a window whose reset is
// rounded down is bounded (DESIGN.md, "windows rounded down"): a legacy
// quota of 3 requests with no window stated, its resets instants on whole
// seconds, rounded down; refusals give no wait.
func firstTables() []Table {
	floor := bare(time.Second) // a refusal without Retry-After: the refusal floor
	// spanned is the start the tables share: two windows stated three
	// seconds apart, each with all of its quota back at its first answer
	// (span 3s), then a refusal at the reset stated, which is now: the
	// server rounds its resets down, and the key reads them a second
	// later.
	spanned := []Step{
		acq(0, "p", Want{Grant: true, Probe: true}),
		rel(0, "p", ok(rl(3, 0, 2, 3*s)), Want{}),
		acq(0, "a", Want{Grant: true}),
		acq(0, "b", Want{Grant: true}),
		rel(0, "a", ok(rl(3, 0, 1, 3*s)), Want{}),
		rel(0, "b", ok(rl(3, 0, 0, 3*s)), Want{PauseUntil: 3 * s, PauseReason: control.ReasonQuota}),
		acq(3*s, "c", Want{Grant: true, Probe: true}),
		rel(3*s, "c", ok(rl(3, 0, 2, 3*s)), Want{PauseUntil: -1}),
		acq(3*s, "d", Want{Grant: true}),
		acq(3*s, "e", Want{Grant: true}),
		rel(3*s, "d", ok(rl(3, 0, 1, 3*s)), Want{}),
		rel(3*s, "e", ok(rl(3, 0, 0, 3*s)), Want{PauseUntil: 6 * s, PauseReason: control.ReasonQuota}),
		acq(6*s, "f", Want{Grant: true, Probe: true}),
		rel(6*s, "f", refused(floor, rl(3, 0, 0, 0)), Want{PauseUntil: 7 * s, PauseReason: control.ReasonQuota}),
	}
	// early is a start whose first refusal comes at the first window's
	// reset: the key reads its resets a second late before any two were
	// stated, and the windows it opens a second after each reset stated
	// end 3s apart.
	early := []Step{
		acq(0, "p", Want{Grant: true, Probe: true}),
		rel(0, "p", ok(rl(3, 0, 2, 2*s)), Want{}),
		acq(0, "a", Want{Grant: true}),
		acq(0, "b", Want{Grant: true}),
		rel(0, "a", ok(rl(3, 0, 1, 2*s)), Want{}),
		rel(0, "b", ok(rl(3, 0, 0, 2*s)), Want{PauseUntil: 2 * s, PauseReason: control.ReasonQuota}),
		acq(2*s, "c", Want{Grant: true, Probe: true}),
		rel(2*s, "c", refused(floor, rl(3, 0, 0, 0)), Want{PauseUntil: 3 * s, PauseReason: control.ReasonQuota}),
		// Stated at 5s, read at 6s.
		acq(3*s, "d", Want{Grant: true, Probe: true}),
		rel(3*s, "d", ok(rl(3, 0, 2, 2*s)), Want{PauseUntil: -1}),
		acq(3*s, "e", Want{Grant: true}),
		acq(3*s, "f", Want{Grant: true}),
		rel(3*s, "e", ok(rl(3, 0, 1, 2*s)), Want{}),
		rel(3*s, "f", ok(rl(3, 0, 0, 2*s)), Want{PauseUntil: 6 * s, PauseReason: control.ReasonQuota}),
		// Stated at 8s, read at 9s: 3s after the one before. The
		// probe's answer comes 100ms after it went.
		acq(6*s, "g", Want{Grant: true, Probe: true}),
		rel(6100*ms, "g", ok(rl(3, 0, 2, 1900*ms)), Want{PauseUntil: -1}),
		acq(6100*ms, "h", Want{Grant: true}),
		rel(6100*ms, "h", ok(rl(3, 0, 1, 1900*ms)), Want{}),
		// The bound, 6.1s+3s, does not reach the reset as read: the
		// window's last request is the test, held back until the
		// window would end had it begun at the probe and lasted a
		// second less than the span: 8.1s, after the reset stated.
		acq(6100*ms, "i", Want{Hold: control.ReasonQuota, Until: 8100 * ms}),
		acq(8100*ms, "i", Want{Grant: true}),
	}
	steps := func(start []Step, more ...Step) []Step { return append(append([]Step(nil), start...), more...) }
	return []Table{
		{Name: "a window rounded down is read to end a span after its first answer", Steps: steps(spanned,
			// Stated at 10s, read at 11s; the window's first answer
			// came at 7s, and the least span between resets stated is
			// 3s: it ends by 10s.
			acq(7*s, "g", Want{Grant: true, Probe: true}),
			rel(7*s, "g", ok(rl(3, 0, 2, 3*s)), Want{PauseUntil: -1}),
			acq(7*s, "h", Want{Grant: true}),
			acq(7*s, "i", Want{Grant: true}),
			rel(7*s, "h", ok(rl(3, 0, 1, 3*s)), Want{}),
			rel(7*s, "i", ok(rl(3, 0, 0, 3*s)), Want{PauseUntil: 10 * s, PauseReason: control.ReasonQuota}),
			// Opened by the probe's answer, 10ms after it went: the
			// next window is reckoned from that answer, never from the
			// instant it was meant to go.
			acq(10*s, "j", Want{Grant: true, Probe: true}),
			rel(10010*ms, "j", ok(rl(3, 0, 2, 2990*ms)), Want{PauseUntil: -1}),
			acq(10010*ms, "k", Want{Grant: true}),
			acq(10010*ms, "l", Want{Grant: true}),
			rel(10010*ms, "k", ok(rl(3, 0, 1, 2990*ms)), Want{}),
			rel(10010*ms, "l", ok(rl(3, 0, 0, 2990*ms)), Want{PauseUntil: 13010 * ms, PauseReason: control.ReasonQuota}),
		)},
		{Name: "a request sent before the reset as read a second late and refused voids the bound", Steps: steps(spanned,
			acq(7*s, "g", Want{Grant: true, Probe: true}),
			rel(7*s, "g", ok(rl(3, 0, 2, 3*s)), Want{PauseUntil: -1}),
			acq(7*s, "h", Want{Grant: true}),
			acq(7*s, "i", Want{Grant: true}),
			rel(7*s, "h", ok(rl(3, 0, 1, 3*s)), Want{}),
			rel(7*s, "i", ok(rl(3, 0, 0, 3*s)), Want{PauseUntil: 10 * s, PauseReason: control.ReasonQuota}),
			// The window was not over at 10s.
			acq(10*s, "j", Want{Grant: true, Probe: true}),
			rel(10*s, "j", refused(floor, rl(3, 0, 0, 0)), Want{PauseUntil: 11 * s, PauseReason: control.ReasonQuota}),
			// Stated at 14s: read at 15s, as it was before.
			acq(11*s, "k", Want{Grant: true, Probe: true}),
			rel(11*s, "k", ok(rl(3, 0, 2, 3*s)), Want{PauseUntil: -1}),
			acq(11*s, "l", Want{Grant: true}),
			acq(11*s, "m", Want{Grant: true}),
			rel(11*s, "l", ok(rl(3, 0, 1, 3*s)), Want{}),
			rel(11*s, "m", ok(rl(3, 0, 0, 3*s)), Want{PauseUntil: 15 * s, PauseReason: control.ReasonQuota}),
		)},
		{Name: "a test of a window rounded down counted in a new window gives its span", Steps: steps(early,
			// Counted in a new window, stated at 10s (read at 11s), 2s
			// after the one before: the span is 2s, and the window
			// the test opened ends by 10.1s.
			rel(8100*ms, "i", ok(rl(3, 0, 2, 1900*ms)), Want{PauseUntil: -1}),
			acq(8100*ms, "j", Want{Grant: true}),
			acq(8100*ms, "k", Want{Grant: true}),
			rel(8100*ms, "j", ok(rl(3, 0, 1, 1900*ms)), Want{}),
			rel(8100*ms, "k", ok(rl(3, 0, 0, 1900*ms)), Want{PauseUntil: 10100 * ms, PauseReason: control.ReasonQuota}),
			// The windows after it likewise, without a test: the last
			// request goes at once.
			acq(10100*ms, "l", Want{Grant: true, Probe: true}),
			rel(10100*ms, "l", ok(rl(3, 0, 2, 1900*ms)), Want{PauseUntil: -1}),
			acq(10100*ms, "m", Want{Grant: true}),
			acq(10100*ms, "n", Want{Grant: true}),
			rel(10100*ms, "m", ok(rl(3, 0, 1, 1900*ms)), Want{}),
			rel(10100*ms, "n", ok(rl(3, 0, 0, 1900*ms)), Want{PauseUntil: 12100 * ms, PauseReason: control.ReasonQuota}),
		)},
		{Name: "a test of a window rounded down counted in its own window ends the tests", Steps: steps(early,
			// Counted in its own window, stated at 8s: already past.
			rel(8100*ms, "i", ok(rl(3, 0, 0, 0)), Want{PauseUntil: 9100 * ms, PauseReason: control.ReasonQuota}),
			acq(9100*ms, "j", Want{Grant: true, Probe: true}),
			rel(9100*ms, "j", ok(rl(3, 0, 2, 2900*ms)), Want{PauseUntil: -1}),
			acq(9100*ms, "k", Want{Grant: true}),
			rel(9100*ms, "k", ok(rl(3, 0, 1, 2900*ms)), Want{}),
			// Not tested again: the last request goes at once.
			acq(9100*ms, "l", Want{Grant: true}),
		)},
		{Name: "resets read as stated are not bounded", Steps: []Step{
			// Windows 2s apart, then one that starts 100ms after the
			// reset stated: without a refusal at a reset that is now,
			// the reset is read as stated, 4.1s.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(3, 0, 2, 2*s)), Want{}),
			acq(0, "a", Want{Grant: true}),
			acq(0, "b", Want{Grant: true}),
			rel(0, "a", ok(rl(3, 0, 1, 2*s)), Want{}),
			rel(0, "b", ok(rl(3, 0, 0, 2*s)), Want{PauseUntil: 2 * s, PauseReason: control.ReasonQuota}),
			acq(2100*ms, "c", Want{Grant: true, Probe: true}),
			rel(2100*ms, "c", ok(rl(3, 0, 2, 2*s)), Want{PauseUntil: -1}),
			acq(2100*ms, "d", Want{Grant: true}),
			acq(2100*ms, "e", Want{Grant: true}),
			rel(2100*ms, "d", ok(rl(3, 0, 1, 2*s)), Want{}),
			rel(2100*ms, "e", ok(rl(3, 0, 0, 2*s)), Want{PauseUntil: 4100 * ms, PauseReason: control.ReasonQuota}),
		}},
	}
}
