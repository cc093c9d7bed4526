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
		// A bare refusal of a request sent with two others in flight,
		// more than any two accepted requests had (one, twice), and one
		// more of its flight sent with three: a limit of requests in
		// flight reached. Neither pauses the key; the probe waits until
		// no more than one is in flight, and accepted, the key goes on
		// with two in flight, held there until 32 acceptances.
		{Name: "a bare refusal with more in flight than any two accepted holds the key to one more than they had", Steps: shedAfter(10, append(pairs(100*ms, 110*ms),
			acq(330*ms, "y", Want{Grant: true}),
			acq(330*ms, "z", Want{Grant: true}),
			acq(331*ms, "x", Want{Grant: true}),
			acq(331*ms, "w", Want{Grant: true}),
			rel(345*ms, "x", refused(bare(4*s)), Want{Plan: noPause, PauseUntil: -1}),
			rel(345*ms, "w", refused(bare(4*s)), Want{Plan: noPause, PauseUntil: -1}),
			acq(345*ms, "pr", Want{Hold: control.ReasonConcurrency}),
			rel(346*ms, "y", ok(), Want{}),
			acq(346*ms, "pr", Want{Grant: true, Probe: true}),
			acq(346*ms, "a", Want{Hold: control.ReasonProbe}),
			rel(347*ms, "z", ok(), Want{}),
			rel(350*ms, "pr", ok(), Want{Probing: -1}),
			acq(350*ms, "a", Want{Grant: true}),
			acq(350*ms, "b", Want{Grant: true, InFlight: 2}),
			acq(350*ms, "c", Want{Hold: control.ReasonConcurrency}),
		)...)},
		// The same, on a key that had two in flight accepted: the refusal
		// came with no more in flight than was accepted, and says nothing
		// of a limit in flight. The probe accepted, the key's window is
		// as it was.
		{Name: "a bare refusal with no more in flight than accepted keeps the window", Steps: shedAfter(31, append(pairs(320*ms),
			acq(330*ms, "x", Want{Grant: true}),
			acq(331*ms, "y", Want{Grant: true}),
			rel(345*ms, "x", refused(bare(4*s)), Want{Plan: noPause, PauseUntil: -1}),
			rel(346*ms, "y", ok(), Want{}),
			acq(346*ms, "pr", Want{Grant: true, Probe: true}),
			rel(350*ms, "pr", ok(), Want{Probing: -1}),
			acq(350*ms, "a", Want{Grant: true}),
			acq(350*ms, "b", Want{Grant: true}),
			acq(350*ms, "c", Want{Grant: true}),
			acq(350*ms, "d", Want{Grant: true, InFlight: 4}),
		)...)},
		// A refusal of the lifted flight still to come (a bucket that
		// refilled one request by the probe, with more of the flight
		// refused after): the lift was wrong. The measurement it
		// dropped is restored, and the key pauses; its next acceptance
		// ends the measurement begun at the first refusal: the 33
		// accepted before it, y and the probe, 35 per 1.55s.
		{Name: "a refusal of a lifted flight restores the measurement", Steps: liftedFlight(29, []time.Duration{310 * ms, 320 * ms}, "x", "y",
			rel(1350*ms, "q", ok(), Want{Learned: &Quota{Q: 35, W: 1550 * ms}}),
		)},
		// Fewer than 32 acceptances, and x refused with one other in
		// flight, as many as two accepted requests had (v and v2): a
		// server that frees a slot once its answer is sent refuses a
		// request sent at once after an answer so, one short of its
		// limit by the client's count. The key does not pause; the
		// probe goes once no more than one is in flight, and accepted,
		// the key goes on with its window as it was, nothing learned.
		// z, of the lifted flight, is then refused with two in flight,
		// more than any two accepted had: a limit in flight's, not a
		// sign that the lift was wrong (see shed.go, shedUnlift). The
		// key pauses for the flight's refusal, as for any of a flight
		// before its epoch, but measures nothing.
		{Name: "a bare refusal with as many in flight as two accepted probes, and a lifted flight's refusal with more keeps the lift", Steps: liftedFlight(10, []time.Duration{100 * ms, 110 * ms}, "y", "x",
			rel(1350*ms, "q", ok(), Want{Unlearned: true}),
		)},
		// x refused with two in flight, more than any two accepted had
		// (one): the probe accepted, the window is held to two. w, of
		// the lifted flight, sent with three, is then refused: a limit
		// in flight explains it as it did x. The key pauses for the
		// flight's refusal, but the lift stands: nothing is learned.
		{Name: "a lifted flight's refusal with more in flight than a held window keeps the lift", Steps: shedAfter(10, append(pairs(100*ms, 110*ms),
			acq(330*ms, "y", Want{Grant: true}),
			acq(330*ms, "z", Want{Grant: true}),
			acq(331*ms, "x", Want{Grant: true}),
			acq(331*ms, "w", Want{Grant: true}),
			rel(345*ms, "x", refused(bare(4*s)), Want{Plan: noPause, PauseUntil: -1}),
			acq(345*ms, "pr", Want{Hold: control.ReasonConcurrency}),
			rel(346*ms, "y", ok(), Want{}),
			rel(346*ms, "z", ok(), Want{}),
			acq(346*ms, "pr", Want{Grant: true, Probe: true}),
			rel(347*ms, "pr", ok(), Want{Probing: -1, Unlearned: true}),
			rel(348*ms, "w", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: 1348 * ms}),
			acq(1348*ms, "q", Want{Grant: true, Probe: true}),
			rel(1350*ms, "q", ok(), Want{Unlearned: true}),
		)...)},
		// The same lift, and a request granted after it refused with
		// two in flight: one more than the window that held before the
		// refusal, a limit in flight. Tried as one of no rate again,
		// it holds the window to two in flight once its probe is
		// accepted.
		{Name: "a refusal after a lift with more in flight than two accepted holds the window", Steps: liftedAtOne(
			acq(347*ms, "a", Want{Grant: true}),
			acq(347*ms, "b", Want{Grant: true}),
			rel(350*ms, "b", refused(bare(4*s)), Want{Plan: noPause, PauseUntil: -1}),
			acq(350*ms, "pr2", Want{Hold: control.ReasonConcurrency}),
			rel(351*ms, "y", ok(), Want{}),
			acq(351*ms, "pr2", Want{Grant: true, Probe: true}),
			rel(352*ms, "pr2", ok(), Want{Probing: -1, Unlearned: true}),
			acq(352*ms, "c", Want{Grant: true, InFlight: 2}),
			acq(352*ms, "d", Want{Hold: control.ReasonConcurrency}),
		)},
		// The same lift, and a request granted after it refused with
		// one in flight, as many as the lifted one: a limit in flight
		// explains it as well (a slot freed once its answer is sent).
		// The lift stands, and the refusal is tried as one of no rate.
		{Name: "a refusal after a lift with as many in flight as the lifted one is tried as one of no rate", Steps: liftedAtOne(
			acq(347*ms, "a", Want{Grant: true}),
			rel(350*ms, "a", refused(bare(4*s)), Want{Plan: noPause, PauseUntil: -1}),
			rel(351*ms, "y", ok(), Want{}),
			acq(351*ms, "pr2", Want{Grant: true, Probe: true}),
			rel(352*ms, "pr2", ok(), Want{Probing: -1, Unlearned: true}),
		)},
		// A request sent before the refused one, accepted after it,
		// says nothing: the probe decides.
		{Name: "a request sent before a bare refusal's request and accepted after it does not lift it", Steps: shedAfter(32,
			acq(329*ms, "w", Want{Grant: true}),
			acq(330*ms, "x", Want{Grant: true}),
			rel(345*ms, "x", refused(bare(4*s)), Want{Plan: noPause, PauseUntil: -1}),
			acq(345*ms, "pr", Want{Hold: control.ReasonConcurrency}),
			rel(346*ms, "w", ok(), Want{}),
			acq(346*ms, "pr", Want{Grant: true, Probe: true}),
			rel(350*ms, "pr", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: 1350 * ms}),
		)},
		// Another request of the refused one's flight refused after it,
		// sent with no more in flight than accepted requests had: not
		// a limit in flight's, nor shed load's (which refuses one). The
		// key pauses, measuring from the first refusal.
		{Name: "a second refusal of a bare refusal's flight, sent with no more in flight than accepted, pauses the key", Steps: shedAfter(32,
			acq(330*ms, "x", Want{Grant: true}),
			acq(331*ms, "y", Want{Grant: true}),
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

// liftedFlight returns the steps of a key that states nothing accepting n
// requests (see shedAfter) and the pairs at ats (see pairs); then first,
// second and z granted together, x (one of the first two) refused bare,
// the probe held until y is accepted, and accepted: the mark lifted. z,
// of the lifted flight, is then refused and the key pauses; q probes
// after the pause. Followed by more.
func liftedFlight(n int, ats []time.Duration, first, second string, more ...Step) []Step {
	steps := append(pairs(ats...),
		acq(330*ms, first, Want{Grant: true}),
		acq(331*ms, second, Want{Grant: true}),
		acq(331*ms, "z", Want{Grant: true}),
		rel(345*ms, "x", refused(bare(4*s)), Want{Plan: plan(s, 0, control.ReasonBackoff), PauseUntil: -1}),
		acq(345*ms, "pr", Want{Hold: control.ReasonConcurrency}),
		rel(346*ms, "y", ok(), Want{}),
		acq(346*ms, "pr", Want{Grant: true, Probe: true}),
		rel(347*ms, "pr", ok(), Want{Probing: -1}),
		rel(348*ms, "z", refused(bare(4*s)), Want{Plan: backoffPlan(s), PauseUntil: 1348 * ms}),
		acq(1348*ms, "q", Want{Grant: true, Probe: true}),
	)
	return shedAfter(n, append(steps, more...)...)
}

// liftedAtOne returns the steps of a key that states nothing accepting 10
// requests and two pairs, each second of a pair sent with one in flight;
// then x, sent with y in flight, refused bare with as many in flight as
// the pairs, and the probe accepted: the mark lifted, y still in flight.
// Followed by more.
func liftedAtOne(more ...Step) []Step {
	steps := append(pairs(100*ms, 110*ms),
		acq(330*ms, "y", Want{Grant: true}),
		acq(331*ms, "x", Want{Grant: true}),
		rel(345*ms, "x", refused(bare(4*s)), Want{Plan: plan(s, 0, control.ReasonBackoff), PauseUntil: -1}),
		acq(345*ms, "pr", Want{Grant: true, Probe: true}),
		rel(347*ms, "pr", ok(), Want{Probing: -1, Unlearned: true}),
	)
	return shedAfter(10, append(steps, more...)...)
}

// pairs returns two requests granted together at each of ats, answered
// 5ms later, the second sent with the first in flight: u and v, then u2
// and v2, ...
func pairs(ats ...time.Duration) []Step {
	var steps []Step
	for i, at := range ats {
		a, b := "u", "v"
		if i > 0 {
			a, b = fmt.Sprintf("u%d", i+1), fmt.Sprintf("v%d", i+1)
		}
		steps = append(steps,
			acq(at, a, Want{Grant: true}), acq(at, b, Want{Grant: true}),
			rel(at+5*ms, a, ok(), Want{}), rel(at+5*ms, b, ok(), Want{}))
	}
	return steps
}
