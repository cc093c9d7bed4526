package controltest

import (
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// streamed is o for a response whose body is still arriving: Release
// applies it and keeps the request in flight until End.
func streamed(o control.Outcome) control.Outcome {
	o.Keep = true
	return o
}

func end(at time.Duration, name string, w Want) Step { return Step{At: at, End: name, Want: w} }

// streamTables shows that a request whose body streams stays in flight
// until End, while its outcome is applied with its headers: it counts for
// the rules that bound requests in flight at the server (concurrency
// policies, content bytes, Config.MaxConcurrency), not for those that wait
// for answers (r, the probe and the ramp).
func streamTables() []Table {
	conc := parse.Quota{Policy: "streams", Unit: "concurrent-requests", Limit: 2, Remaining: -1, Reset: -1}
	return []Table{
		{Name: "a streamed response holds its slot until its body ends", Steps: []Step{
			// The probe's headers open the key and state 2 concurrent
			// requests; its body still streams.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(100*ms, "p", streamed(ok(conc)), Want{InFlight: 1, Probing: -1}),
			acq(100*ms, "a", Want{Grant: true, InFlight: 2}),
			acq(100*ms, "b", Want{Hold: control.ReasonConcurrency}),
			rel(200*ms, "a", streamed(ok(conc)), Want{InFlight: 2}),
			acq(200*ms, "b", Want{Hold: control.ReasonConcurrency}),
			// The probe's body ends: its slot frees.
			end(700*ms, "p", Want{InFlight: 1}),
			acq(700*ms, "b", Want{Grant: true, InFlight: 2}),
			// A response that arrives whole ends at once.
			rel(800*ms, "b", ok(conc), Want{InFlight: 1}),
			end(900*ms, "a", Want{InFlight: -1}),
		}},
		{Name: "a body streaming when a probe answers does not widen the ramp", Steps: []Step{
			// A key that states nothing: s's body streams on while x
			// is refused and the key pauses.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(100*ms, "p", ok(), Want{}),
			acq(100*ms, "s", Want{Grant: true}),
			rel(200*ms, "s", streamed(ok()), Want{InFlight: 1}),
			// y2 and y3 are accepted with two others in flight, s
			// counted: x, refused with fewer, is a rate's (see
			// shed.go), and the key pauses.
			acq(200*ms, "y1", Want{Grant: true}),
			acq(200*ms, "y2", Want{Grant: true}),
			rel(200*ms, "y1", ok(), Want{}),
			acq(200*ms, "y3", Want{Grant: true}),
			rel(200*ms, "y2", ok(), Want{}),
			rel(200*ms, "y3", ok(), Want{}),
			acq(200*ms, "x", Want{Grant: true}),
			rel(300*ms, "x", refused(bare(4*s)), Want{PauseUntil: 1300 * ms}),
			// The probe after the pause answers with s still streaming:
			// s awaits no answer and counts against no cwnd, so the key
			// opens to one in flight, as if s had ended.
			acq(1300*ms, "q", Want{Grant: true, Probe: true}),
			rel(1400*ms, "q", ok(), Want{}),
			acq(1400*ms, "a", Want{Grant: true}),
			acq(1400*ms, "b", Want{Hold: control.ReasonConcurrency}),
		}},
		{Name: "a streamed response spends quota at its headers", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(10, 10*s, 5, 10*s)), Want{}),
			acq(0, "a", Want{Grant: true}),
			// r=0 with its headers pauses the key at once, while its body
			// streams on.
			rel(s, "a", streamed(ok(rl(10, 10*s, 0, 9*s))), Want{InFlight: 1, PauseUntil: 10 * s}),
			acq(2*s, "b", Want{Hold: control.ReasonQuota, Until: 10 * s}),
			end(3*s, "a", Want{InFlight: -1, PauseUntil: 10 * s}),
		}},
		{Name: "a streamed response no longer counts against r", Steps: []Step{
			// r counts the requests the server admitted: one whose
			// headers came back is counted in the r it reported, and
			// its body streaming on does not spend r again. Only the
			// requests awaiting their answer count against r.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(10, 10*s, 2, 10*s)), Want{}),
			acq(0, "a", Want{Grant: true}),
			rel(0, "a", streamed(ok(rl(10, 10*s, 1, 10*s))), Want{InFlight: 1}),
			acq(0, "b", Want{Grant: true, InFlight: 2}),
			acq(0, "c", Want{Hold: control.ReasonQuota, Until: 10 * s}),
			end(s, "a", Want{InFlight: 1}),
			acq(s, "c", Want{Hold: control.ReasonQuota, Until: 10 * s}),
		}},
		{Name: "a content-bytes quota counts streams until they end", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", control.Outcome{First: true, Bytes: 100, Quotas: []parse.Quota{{Policy: "bw", Unit: "content-bytes", Limit: 1000, Window: 60 * s, Remaining: 200, Reset: 10 * s}}}, Want{}),
			acq(0, "a", Want{Grant: true}),
			rel(0, "a", streamed(control.Outcome{First: true, Bytes: -1}), Want{InFlight: 1}),
			acq(0, "b", Want{Grant: true}),
			acq(0, "c", Want{Hold: control.ReasonQuota, Until: 10 * s}),
		}},
		{Name: "the probe after a pause does not wait for streams", Steps: []Step{
			// A stream answered before the pause brings no new answer:
			// the probe goes when the pause ends, while it streams on.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(10, 10*s, 5, 10*s)), Want{}),
			acq(0, "a", Want{Grant: true}),
			rel(0, "a", streamed(ok(rl(10, 10*s, 0, 2*s))), Want{InFlight: 1, PauseUntil: 2 * s}),
			acq(2*s, "b", Want{Grant: true, Probe: true, InFlight: 2}),
			acq(2*s, "c", Want{Hold: control.ReasonProbe}),
			rel(3*s, "b", ok(rl(10, 10*s, 9, 10*s)), Want{InFlight: 1}),
			acq(3*s, "c", Want{Grant: true, InFlight: 2}),
		}},
		{Name: "a streamed body never ended holds its slot until its lease ends", Config: control.Config{Lease: 160 * s, MaxConcurrency: 1}, Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", streamed(ok()), Want{InFlight: 1}),
			acq(s, "a", Want{Hold: control.ReasonConcurrency, Wake: 170 * s}),
			acq(170*s, "a", Want{Grant: true, InFlight: 1}),
			// The late end of the expired lease frees nothing more.
			end(171*s, "p", Want{InFlight: 1}),
		}},
		{Name: "a refusal is not kept in flight", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", streamed(refused(retryAfter(2*s))), Want{InFlight: -1, PauseUntil: 2 * s}),
		}},
	}
}
