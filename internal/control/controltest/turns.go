package controltest

import (
	"time"

	"github.com/politehttp/polite/internal/control"
)

// turnTables are the rules that start the requests held to an instant in
// the order they first asked (see control's turn.go). MaxRate 2 paces the
// key at one start per 500ms.
func turnTables() []Table {
	pace := control.Config{MaxRate: 2}
	turn := func(at time.Duration, name string, w Want) Step {
		st := acq(at, name, w)
		st.Turn = true
		return st
	}
	return []Table{
		{Name: "a request held to an instant goes before a younger one held to it", Config: pace, Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			// a is held to the pace's next start, and claims it.
			turn(0, "a", Want{Hold: control.ReasonPace, Until: 500 * ms}),
			// b, younger, is held behind a's claim: to the end of a's
			// hold, when a may go.
			turn(100*ms, "b", Want{Hold: control.ReasonPace, Until: 500 * ms}),
			// At 500ms b asks first, and is held behind a still, until
			// a's claim lapses, a grace later; a takes the start.
			turn(500*ms, "b", Want{Hold: control.ReasonPace, Until: 550 * ms}),
			turn(500*ms, "a", Want{Grant: true}),
			rel(500*ms, "a", ok(), Want{}),
			// a's claim ended with its grant: b is held by the pace
			// alone, and claims the next start.
			turn(500*ms, "b", Want{Hold: control.ReasonPace, Until: s}),
			// A request that just arrived waits behind b.
			turn(900*ms, "c", Want{Hold: control.ReasonPace, Until: s}),
			turn(s, "c", Want{Hold: control.ReasonPace, Until: s + 50*ms}),
			turn(s, "b", Want{Grant: true}),
		}},
		{Name: "a claim whose request does not come back lapses a grace after its hold", Config: pace, Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			turn(0, "a", Want{Hold: control.ReasonPace, Until: 500 * ms}),
			turn(500*ms, "b", Want{Hold: control.ReasonPace, Until: 550 * ms}),
			// a never asks again: b goes when a's claim lapses.
			turn(550*ms, "b", Want{Grant: true}),
		}},
		{Name: "requests held for what is their own, or that take no turns, claim nothing", Config: pace, Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			// A retry held to its own After claims nothing, and a
			// request that takes no turns claims nothing either.
			{At: 0, Acquire: "r", Turn: true, After: 2 * s, Want: Want{Hold: control.ReasonRetryBudget, Until: 2 * s}},
			acq(100*ms, "x", Want{Hold: control.ReasonPace, Until: 500 * ms}),
			turn(200*ms, "b", Want{Hold: control.ReasonPace, Until: 500 * ms}),
			turn(500*ms, "b", Want{Grant: true}),
		}},
		{Name: "requests that first asked at one instant share a claim until the last is granted", Config: pace, Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			turn(100*ms, "a", Want{Hold: control.ReasonPace, Until: 500 * ms}),
			turn(100*ms, "b", Want{Hold: control.ReasonPace, Until: 500 * ms}),
			turn(300*ms, "c", Want{Hold: control.ReasonPace, Until: 500 * ms}),
			turn(500*ms, "b", Want{Grant: true}),
			rel(500*ms, "b", ok(), Want{}),
			// a still waits: c stays behind it.
			turn(500*ms, "c", Want{Hold: control.ReasonPace, Until: 550 * ms}),
			turn(500*ms, "a", Want{Hold: control.ReasonPace, Until: s}),
			turn(s, "c", Want{Hold: control.ReasonPace, Until: s + 50*ms}),
			turn(s, "a", Want{Grant: true}),
			rel(s, "a", ok(), Want{}),
			turn(s, "c", Want{Hold: control.ReasonPace, Until: 1500 * ms}),
		}},
	}
}
