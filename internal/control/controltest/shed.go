package controltest

import (
	"fmt"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// shedTables are the rules for a refusal that may be of no rate (a server
// shedding load): see internal/control's shed.go.
func shedTables() []Table {
	noPause := plan(s, 0, control.ReasonBackoff)
	return []Table{
		// A key that states nothing, accepted 32 times, refuses a request with a bare 429: the key does not
		// pause, its next request probes at once, and the probe
		// accepted drops the measurement: no quota is learned, and the
		// key is open as before, four in flight. The refused request
		// waits its floor (Pause 0: it carries its wait itself).
		// Before, the key paused a second, and its next acceptance ended
		// a measurement: 32 per 1.545s.
		{Name: "a bare refusal after 32 acceptances probes at once; the probe accepted, nothing is learned", Steps: shedAfter(32,
			acq(330*ms, "x", Want{Grant: true}),
			rel(345*ms, "x", refused(bare(4*s)), Want{Plan: noPause, PauseUntil: -1}),
			acq(345*ms, "pr", Want{Grant: true, Probe: true}),
			acq(345*ms, "held", Want{Hold: control.ReasonProbe}),
			rel(350*ms, "pr", ok(), Want{Probing: -1}),
			acq(350*ms, "a", Want{Grant: true}),
			acq(350*ms, "b", Want{Grant: true}),
			acq(350*ms, "c", Want{Grant: true}),
			acq(350*ms, "d", Want{Grant: true, InFlight: 4}),
			rel(355*ms, "a", ok(), Want{}),
			rel(355*ms, "b", ok(), Want{}),
			rel(355*ms, "c", ok(), Want{}),
			rel(355*ms, "d", ok(), Want{}),
			acq(355*ms, "e", Want{Grant: true}),
			acq(355*ms, "f", Want{Grant: true}),
			acq(355*ms, "g", Want{Grant: true}),
			acq(355*ms, "h", Want{Grant: true}),
			acq(355*ms, "i", Want{Grant: true}),
		)},
		// The same refusal, and the probe refused too: a limit reached.
		// The key pauses and measures as for any refusal, from the
		// first: 32 accepted, window from the probe at -200ms to the
		// acceptance that ends the measurement.
		{Name: "a bare refusal after 32 acceptances whose probe is refused pauses and measures", Steps: shedAfter(32,
			acq(330*ms, "x", Want{Grant: true}),
			rel(345*ms, "x", refused(bare(4*s)), Want{Plan: noPause, PauseUntil: -1}),
			acq(345*ms, "pr", Want{Grant: true, Probe: true}),
			rel(350*ms, "pr", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: 1350 * ms}),
			acq(1350*ms, "pr2", Want{Grant: true, Probe: true}),
			rel(1350*ms, "pr2", ok(), Want{Learned: &Quota{Q: 32, W: 1550 * ms}}),
		)},
		// A request sent after the refused one, before its answer, is
		// accepted: the server was accepting; the mark is lifted
		// without waiting for the probe, and the probe's answer keeps
		// the key's window.
		{Name: "a request sent after a bare refusal's request and accepted lifts it", Steps: shedAfter(32,
			acq(330*ms, "x", Want{Grant: true}),
			acq(341*ms, "y", Want{Grant: true}),
			rel(345*ms, "x", refused(bare(4*s)), Want{Plan: noPause, PauseUntil: -1}),
			acq(345*ms, "pr", Want{Grant: true, Probe: true}),
			rel(346*ms, "y", ok(), Want{Probing: -1}),
			acq(346*ms, "a", Want{Grant: true}),
			acq(346*ms, "b", Want{Grant: true}),
			acq(346*ms, "c", Want{Grant: true, InFlight: 4}),
			rel(350*ms, "pr", ok(), Want{}),
			rel(350*ms, "a", ok(), Want{}),
			acq(350*ms, "d", Want{Grant: true}),
			acq(350*ms, "e", Want{Grant: true}),
		)},
		// A request sent before the refused one, accepted after it,
		// says nothing: the probe decides.
		{Name: "a request sent before a bare refusal's request and accepted after it does not lift it", Steps: shedAfter(32,
			acq(329*ms, "w", Want{Grant: true}),
			acq(330*ms, "x", Want{Grant: true}),
			rel(345*ms, "x", refused(bare(4*s)), Want{Plan: noPause, PauseUntil: -1}),
			rel(346*ms, "w", ok(), Want{}),
			acq(346*ms, "pr", Want{Grant: true, Probe: true}),
			rel(350*ms, "pr", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: 1350 * ms}),
		)},
		// Another request of the refused one's flight refused after it:
		// a limit reached. The key pauses (the first refusal already
		// started the measurement).
		{Name: "a second refusal of a bare refusal's flight pauses the key", Steps: shedAfter(32,
			acq(330*ms, "x", Want{Grant: true}),
			acq(341*ms, "y", Want{Grant: true}),
			rel(345*ms, "x", refused(bare(4*s)), Want{Plan: noPause, PauseUntil: -1}),
			rel(346*ms, "y", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: 1346 * ms}),
			acq(400*ms, "z", Want{Hold: control.ReasonBackoff, Until: 1346 * ms}),
		)},
		// Fewer than 32 acceptances since the last refusal: the key
		// pauses at once, as it did.
		{Name: "a bare refusal after 31 acceptances pauses the key", Steps: shedAfter(31,
			acq(330*ms, "x", Want{Grant: true}),
			rel(345*ms, "x", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: 1345 * ms}),
		)},
		// A refusal with Retry-After is the server's word: the key
		// pauses for it, however many were accepted.
		{Name: "a refusal giving a wait after 32 acceptances pauses the key", Steps: shedAfter(32,
			acq(330*ms, "x", Want{Grant: true}),
			rel(345*ms, "x", refused(retryAfter(2*s)), Want{PauseUntil: 2345 * ms}),
		)},
	}
}

// shedAfter returns the steps of a key that states nothing accepting n
// requests: a slow probe (see slowProbe), then n-1 requests accepted one
// after another, 10ms apart, from 0; followed by more.
func shedAfter(n int, more ...Step) []Step {
	steps := slowProbe()
	for i := range n - 1 {
		at := time.Duration(i) * 10 * ms
		name := fmt.Sprintf("s%d", i)
		steps = append(steps, acq(at, name, Want{Grant: true}), rel(at+5*ms, name, ok(), Want{}))
	}
	return append(steps, more...)
}
