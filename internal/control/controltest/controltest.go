// Package controltest holds the step tables of the per-key controller: one
// table per pacing rule, each a list of requests acquired and released at
// fixed instants with what must come of them, in the manner of
// golang.org/x/time/rate's rate_test.go. The controller's own tests run
// them on a bare State; package storetest replays them through a Store,
// which must give the same results.
package controltest

import (
	"fmt"
	"reflect"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// Table is a rule of the controller, shown by steps on one key.
type Table struct {
	Name   string
	Config control.Config
	Steps  []Step
}

// Step is one event at an instant, with what must come of it.
type Step struct {
	At time.Duration // since the table's start

	// Acquire names a request to start; Release names a request started
	// earlier to end, with Out; End names a request whose Release kept
	// it in flight (Out.Keep) to end. Forget clears the key.
	Acquire, Release string
	End              string
	Custom           bool           // Acquire: the key is a custom key
	Cost             control.Cost   // Acquire: what the request costs
	Deadline         time.Duration  // Acquire: the request's context deadline, from At; 0: none
	After            time.Duration  // Acquire: not before this instant, since the start (Ask.After); 0: none
	AfterReason      control.Reason // Acquire: what After is for (Ask.AfterReason)
	Turn             bool           // Acquire: the request takes turns (Ask.Turns; on its later steps until it is granted, Ask.Since is the instant of its first, and Ask.Claimed what its last Hold said)
	Out              control.Outcome
	Forget           bool

	Want Want
}

// Want is what must come of a step. Zero fields are not checked, except
// Grant and Hold, which are checked for every Acquire.
type Want struct {
	Grant bool           // Acquire: granted
	Probe bool           // Acquire: granted as a lone probe
	Hold  control.Reason // Acquire: held for this reason
	// Until is when the hold ends, since the table's start; Wake when to
	// look again (-1: zero; 0: not checked).
	Until, Wake time.Duration
	// Excess is the unit of a quota the request's cost exceeds: it can
	// never start (checked whenever an Acquire is held).
	Excess string

	Plan *control.Plan // Release: the refusal plan

	InFlight    int            // View after the step: requests in flight (-1: zero)
	PauseUntil  time.Duration  // View: the pause's end since the start (-1: not paused)
	PauseReason control.Reason // View
	Learned     *Quota         // View: the learned quota
	Unlearned   bool           // View: no quota learned
	Retries     int            // View: RetriesLeft (-1: zero)
	Probing     int            // View: 1 probing, -1 not probing
	Distrusted  bool           // View: hints distrusted at the step
}

// Quota is a quota and its window.
type Quota struct {
	Q int64
	W time.Duration
}

// Result is what a step gave: the grant or the hold of an Acquire, the
// plan of a Release, and the key's View after it.
type Result struct {
	Granted bool
	Lease   control.Lease
	Hold    control.Hold
	Excess  control.Excess // when Hold says Never
	Plan    control.Plan
	View    control.View
	Gen     uint64
}

// Replay runs tab's steps from t0 on one key. do runs each step: it must
// call its argument on the key's state (once, or again on fresh state if
// it retries) and return what the last call returned.
func Replay(tab Table, t0 time.Time, do func(step func(*control.State) Result) Result) []Result {
	leases := map[string]control.Lease{}
	asked := map[string]time.Time{} // when each request that takes turns first asked
	claimed := map[string]bool{}    // whether its last hold counted it in its place's claim
	out := make([]Result, 0, len(tab.Steps))
	for _, st := range tab.Steps {
		now := t0.Add(st.At)
		var run func(*control.State) Result
		switch {
		case st.Forget:
			run = func(s *control.State) Result {
				s.Forget(now, &tab.Config)
				return Result{View: s.View(now), Gen: s.Generation()}
			}
		case st.Acquire != "":
			ask := control.Ask{Custom: st.Custom}
			if st.Deadline != 0 {
				ask.Until = now.Add(st.Deadline)
			}
			if st.After != 0 {
				ask.After, ask.AfterReason = t0.Add(st.After), st.AfterReason
			}
			if st.Turn {
				ask.Turns = true
				if first, again := asked[st.Acquire]; again {
					ask.Since, ask.Claimed = first, claimed[st.Acquire]
				} else {
					asked[st.Acquire] = now
				}
			}
			run = func(s *control.State) Result {
				var l control.Lease
				l.SetCost(st.Cost)
				h, ok := s.Acquire(now, &tab.Config, ask, &l)
				r := Result{Granted: ok, Lease: l, Hold: h, View: s.View(now), Gen: s.Generation()}
				if h.Never {
					r.Excess = s.Excess(now, &st.Cost)
				}
				return r
			}
		case st.End != "":
			l := leases[st.End]
			run = func(s *control.State) Result {
				s.End(now, &tab.Config, &l)
				return Result{View: s.View(now), Gen: s.Generation()}
			}
		default:
			l := leases[st.Release]
			o := st.Out
			run = func(s *control.State) Result {
				o := o
				p := s.Release(now, &tab.Config, &l, &o)
				return Result{Plan: p, View: s.View(now), Gen: s.Generation()}
			}
		}
		r := do(run)
		if st.Acquire != "" {
			claimed[st.Acquire] = r.Hold.Claimed()
		}
		if st.Acquire != "" && r.Granted {
			leases[st.Acquire] = r.Lease
			delete(asked, st.Acquire)
		}
		out = append(out, r)
	}
	return out
}

// Check returns what in results, from a Replay of tab at t0, differs from
// the steps' wants.
func Check(tab Table, t0 time.Time, results []Result) []string {
	var errs []string
	instant := func(d time.Duration) time.Time {
		if d < 0 {
			return time.Time{}
		}
		return t0.Add(d)
	}
	for i, st := range tab.Steps {
		if i >= len(results) {
			break
		}
		r, w := results[i], st.Want
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Sprintf("step %d (t=%v): ", i, st.At)+fmt.Sprintf(format, args...))
		}
		if st.Acquire != "" {
			if r.Granted != w.Grant {
				bad("Acquire(%s) granted = %v (hold %v until %v), want %v", st.Acquire, r.Granted, r.Hold.Reason, since(t0, r.Hold.Until()), w.Grant)
			}
			if r.Granted && r.Lease.Probe() != w.Probe {
				bad("Acquire(%s) probe = %v, want %v", st.Acquire, r.Lease.Probe(), w.Probe)
			}
			if !r.Granted && r.Hold.Reason != w.Hold {
				bad("Acquire(%s) held for %v, want %v", st.Acquire, r.Hold.Reason, w.Hold)
			}
			if w.Until != 0 && !r.Hold.Until().Equal(instant(w.Until)) {
				bad("Acquire(%s) held until %v, want %v", st.Acquire, since(t0, r.Hold.Until()), w.Until)
			}
			if !r.Granted && (r.Hold.Never != (w.Excess != "") || r.Excess.Unit != w.Excess) {
				bad("Acquire(%s) never = %v, excess in %q; want excess in %q", st.Acquire, r.Hold.Never, r.Excess.Unit, w.Excess)
			}
			if w.Wake != 0 && !r.Hold.Wake().Equal(instant(w.Wake)) {
				bad("Acquire(%s) wake at %v, want %v", st.Acquire, since(t0, r.Hold.Wake()), w.Wake)
			}
		}
		if w.Plan != nil && r.Plan != *w.Plan {
			bad("Release(%s) plan = %+v, want %+v", st.Release, r.Plan, *w.Plan)
		}
		v := r.View
		if w.InFlight != 0 && v.InFlight != max(w.InFlight, 0) {
			bad("InFlight = %d, want %d", v.InFlight, max(w.InFlight, 0))
		}
		if w.PauseUntil != 0 && !v.PauseUntil.Equal(instant(w.PauseUntil)) {
			bad("PauseUntil = %v, want %v", since(t0, v.PauseUntil), w.PauseUntil)
		}
		if w.PauseReason != 0 && v.PauseReason != w.PauseReason {
			bad("PauseReason = %v, want %v", v.PauseReason, w.PauseReason)
		}
		if w.Learned != nil {
			if v.Learned == nil || v.Learned.Quota != w.Learned.Q || v.Learned.Window != w.Learned.W {
				bad("Learned = %+v, want %+v", v.Learned, *w.Learned)
			}
		}
		if w.Unlearned && v.Learned != nil {
			bad("Learned = %+v, want none", *v.Learned)
		}
		if w.Retries != 0 && v.RetriesLeft != max(w.Retries, 0) {
			bad("RetriesLeft = %d, want %d", v.RetriesLeft, max(w.Retries, 0))
		}
		if w.Probing != 0 && v.Probing != (w.Probing > 0) {
			bad("Probing = %v, want %v", v.Probing, w.Probing > 0)
		}
		if w.Distrusted && !v.DistrustUntil.After(t0.Add(st.At)) {
			bad("hints not distrusted (until %v)", since(t0, v.DistrustUntil))
		}
	}
	return errs
}

// Diff returns the first step where two replays of tab differ.
func Diff(tab Table, a, b []Result) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d results against %d", len(a), len(b))
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return fmt.Sprintf("step %d (t=%v): %+v, against %+v", i, tab.Steps[i].At, a[i], b[i])
		}
	}
	return ""
}

func since(t0, t time.Time) any {
	if t.IsZero() {
		return "zero"
	}
	return t.Sub(t0)
}

// Helpers to write steps.

func acq(at time.Duration, name string, w Want) Step { return Step{At: at, Acquire: name, Want: w} }

func rel(at time.Duration, name string, out control.Outcome, w Want) Step {
	return Step{At: at, Release: name, Out: out, Want: w}
}

// ok is an accepted response with the quotas qs.
func ok(qs ...parse.Quota) control.Outcome {
	return control.Outcome{First: true, Quotas: qs, Bytes: -1, Served: true}
}

// refused is a 429 with the quotas qs, and r as the refusal.
func refused(r control.Refusal, qs ...parse.Quota) control.Outcome {
	return control.Outcome{First: true, Quotas: qs, Bytes: -1, Refused: true, Refusal: r}
}

// retryAfter is a refusal giving d, for a request that may be retried.
func retryAfter(d time.Duration) control.Refusal {
	return control.Refusal{Wait: d, Given: true, Reason: control.ReasonRetryAfter, Retryable: true, MaxWait: 10 * time.Minute}
}

// bare is a refusal giving no wait, backing off by backoff.
func bare(backoff time.Duration) control.Refusal {
	return control.Refusal{Backoff: backoff, Retryable: true, MaxWait: 10 * time.Minute}
}

// rl is a RateLimit observation: r left within t (t < 0: none), under q
// per w when q > 0.
func rl(q int64, w time.Duration, r int64, t time.Duration) parse.Quota {
	if q <= 0 {
		q = -1
	}
	return parse.Quota{Policy: "default", Unit: "requests", Limit: q, Window: w, Remaining: r, Reset: t}
}

// githubResources are the steps of a key whose server states, in each
// answer, the quota of the resource its request used (GitHub's
// X-RateLimit-Resource: core 5000 an hour, search 30 a minute): the core
// answers do not count down the search quota. They did, as answers that
// state nothing do (see State.spend): after 29 core requests the whole key
// held until the search quota's reset, neither quota spent.
func githubResources() []Step {
	github := func(resource string, limit, remaining int64, reset time.Duration) parse.Quota {
		return parse.Quota{Policy: resource, Unit: "requests", Limit: limit, Remaining: remaining, Reset: reset, Dialect: "github"}
	}
	steps := []Step{
		acq(0, "p", Want{Grant: true, Probe: true}),
		rel(100*ms, "p", ok(github("core", 5000, 4999, 3600*s)), Want{}),
		acq(s, "search", Want{Grant: true}),
		rel(s+100*ms, "search", ok(github("search", 30, 29, 59*s)), Want{}),
	}
	at := 2 * s
	for i := range 29 {
		name := fmt.Sprintf("core%d", i)
		steps = append(steps,
			acq(at, name, Want{Grant: true}),
			rel(at+100*ms, name, ok(github("core", 5000, int64(4998-i), 3600*s-at)), Want{}),
		)
		at += 200 * ms
	}
	return append(steps, acq(at, "next", Want{Grant: true}))
}

// dialect is q read from the family d.
func dialect(q parse.Quota, d string) parse.Quota {
	q.Dialect = d
	return q
}

const s = time.Second
const ms = time.Millisecond

// tables returns the tables of the rules on requests.
func tables() []Table {
	lease := control.Config{Lease: 160 * s} // slots of 10s
	return append([]Table{
		{Name: "probe then ramp", Steps: silentRamp()},
		{Name: "a key answering in 50µs ramps too", Steps: silentRampFast()},
		{Name: "a key that states its quotas ramps faster", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(1*s, "p", ok(rl(100, 60*s, 90, 60*s)), Want{}),
			acq(1*s, "a", Want{Grant: true}),
			acq(1*s, "b", Want{Grant: true}),
			acq(1*s, "c", Want{Grant: true}),
			acq(1*s, "d", Want{Grant: true, InFlight: 4}),
			acq(1*s, "e", Want{Hold: control.ReasonConcurrency}),
			// Each answer adds two.
			rel(2*s, "a", ok(rl(100, 60*s, 89, 59*s)), Want{}),
			acq(2*s, "f", Want{Grant: true}),
			acq(2*s, "g", Want{Grant: true}),
			acq(2*s, "h", Want{Grant: true}),
			acq(2*s, "i", Want{Hold: control.ReasonConcurrency, InFlight: 6}),
		}},
		// Answering in 5ms, it grows by one per answer, doubling each
		// round trip: its answers may overstate what the server lets
		// through, and then the ramp is the only bound. Tripling sent 6
		// after the first answer here.
		{Name: "a key that states its quotas and answers fast ramps doubling", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(5*ms, "p", ok(rl(100, 60*s, 90, 60*s)), Want{}),
			acq(5*ms, "a", Want{Grant: true}),
			acq(5*ms, "b", Want{Grant: true}),
			acq(5*ms, "c", Want{Grant: true}),
			acq(5*ms, "d", Want{Grant: true, InFlight: 4}),
			acq(5*ms, "e", Want{Hold: control.ReasonConcurrency}),
			rel(10*ms, "a", ok(rl(100, 60*s, 89, 60*s)), Want{}),
			acq(10*ms, "f", Want{Grant: true}),
			acq(10*ms, "g", Want{Grant: true, InFlight: 5}),
			acq(10*ms, "h", Want{Hold: control.ReasonConcurrency}),
		}},
		{Name: "spent quota pauses the key, then a probe", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(1*s, "p", ok(rl(0, 0, 0, 30*s)), Want{PauseUntil: 31 * s, PauseReason: control.ReasonQuota, Probing: 1}),
			acq(2*s, "a", Want{Hold: control.ReasonQuota, Until: 31 * s}),
			acq(31*s, "b", Want{Grant: true, Probe: true}),
			acq(31*s, "c", Want{Hold: control.ReasonProbe}),
		}},
		// A reset of now (t=0), as a server rounding its epoch reset
		// down states it: the window has ended, and the next request
		// still probes alone. Before, every request went at once.
		{Name: "spent quota with a reset of now, then a probe", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(1*s, "p", ok(rl(0, 0, 0, 0)), Want{PauseUntil: 1*s + 1, PauseReason: control.ReasonQuota, Probing: 1}),
			acq(2*s, "a", Want{Grant: true, Probe: true}),
			acq(2*s, "b", Want{Hold: control.ReasonProbe}),
		}},
		{Name: "stale observations expire", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(0, 0, 1, 10*s)), Want{}),
			acq(1*s, "a", Want{Grant: true}),
			// r=1 was spent by a, which is in flight: hold until t.
			acq(1*s, "b", Want{Hold: control.ReasonQuota, Until: 10 * s}),
			rel(2*s, "a", ok(), Want{}),
			// Past t, the observation says nothing: not a refill, a probe.
			acq(10*s, "c", Want{Grant: true, Probe: true, Probing: 1}),
			acq(10*s, "d", Want{Hold: control.ReasonProbe}),
		}},
		{Name: "requests in flight count against r", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(0, 0, 3, 60*s)), Want{}),
			acq(1*s, "a", Want{Grant: true}),
			acq(1*s, "b", Want{Grant: true}),
			acq(1*s, "c", Want{Grant: true}),
			acq(1*s, "d", Want{Hold: control.ReasonQuota, Until: 60 * s}),
			// An answer overtaken by a later one does not raise r; c,
			// still in flight, counts against the r=1 left.
			rel(2*s, "a", ok(rl(0, 0, 1, 58*s)), Want{}),
			rel(2*s, "b", ok(rl(0, 0, 2, 58*s)), Want{}),
			acq(2*s, "e", Want{Hold: control.ReasonQuota, Until: 60 * s}),
			rel(3*s, "c", ok(rl(0, 0, 1, 57*s)), Want{}),
			acq(3*s, "f", Want{Grant: true}),
			acq(3*s, "g", Want{Hold: control.ReasonQuota, Until: 60 * s}),
			// f's answer says r=0: the key pauses until t.
			rel(4*s, "f", ok(rl(0, 0, 0, 56*s)), Want{PauseUntil: 60 * s}),
			acq(4*s, "g", Want{Hold: control.ReasonQuota, Until: 60 * s}),
		}},
		{Name: "r is never trusted above q", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			// r=1000 under q=2 is read as r=2.
			rel(0, "p", ok(rl(2, s, 1000, 60*s)), Want{}),
			acq(1*s, "a", Want{Grant: true}),
			acq(1*s, "b", Want{Grant: true}),
			acq(2500*ms, "c", Want{Hold: control.ReasonQuota, Until: 60 * s}),
		}},
		{Name: "ratio trap", Steps: []Step{
			// r=10000;t=10 under q=10000;w=1000 (draft-11 §8.5): once
			// 10000 have started, the next waits for the first to leave
			// w, not for t.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(3, 1000*s, 3, 10*s)), Want{}),
			acq(0, "a", Want{Grant: true}),
			acq(0, "b", Want{Grant: true}),
			rel(0, "a", ok(rl(3, 1000*s, 2, 10*s)), Want{}),
			rel(0, "b", ok(rl(3, 1000*s, 1, 10*s)), Want{}),
			acq(20*s, "c", Want{Hold: control.ReasonPace, Until: 1000 * s}),
		}},
		{Name: "cached responses change nothing", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			// A response from a cache comes without its quotas.
			rel(0, "p", ok(), Want{PauseUntil: -1}),
			acq(0, "a", Want{Grant: true}),
		}},
		{Name: "refusal waits are floors", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			acq(0, "a", Want{Grant: true}),
			// Retry-After: 7, jitter 0 from Rand 0: pause 7s exactly, no
			// earlier; then a lone probe.
			rel(1*s, "a", refused(retryAfter(7*s)), Want{
				Plan:       &control.Plan{Wait: 7 * s, Pause: 7 * s, Reason: control.ReasonRetryAfter, Retry: true},
				PauseUntil: 8 * s, PauseReason: control.ReasonRetryAfter, Probing: 1,
			}),
			acq(7*s, "b", Want{Hold: control.ReasonRetryAfter, Until: 8 * s}),
			acq(8*s, "c", Want{Grant: true, Probe: true}),
			// Beyond MaxWait: no retry, the pause stays the server's,
			// capped at 24h, as the plan says.
			rel(9*s, "c", refused(retryAfter(1000*time.Hour)), Want{
				Plan:       &control.Plan{Wait: 1000 * time.Hour, Pause: control.MaxPause, Reason: control.ReasonRetryAfter},
				PauseUntil: 9*s + control.MaxPause, PauseReason: control.ReasonRetryAfter,
			}),
		}},
		// draft-11 §7: with both fields, Retry-After takes precedence and
		// the effective window may be ignored. The quota's t of 60s
		// paused the key for 60s, and the pause is only ever lengthened:
		// the retry, and the origin, waited 12 times what the server
		// asked. Of another family (GitHub's Retry-After may be its
		// secondary limit's, beside a primary one spent) the later holds.
		{Name: "Retry-After takes precedence over the RateLimit fields", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(s, "p", refused(retryAfter(5*s), dialect(rl(100, 60*s, 0, 60*s), "ietf")), Want{
				Plan:       &control.Plan{Wait: 5 * s, Pause: 5 * s, Reason: control.ReasonRetryAfter, Retry: true},
				PauseUntil: 6 * s, PauseReason: control.ReasonRetryAfter,
			}),
			acq(5*s, "a", Want{Hold: control.ReasonRetryAfter, Until: 6 * s}),
			acq(6*s, "b", Want{Grant: true, Probe: true}),
		}},
		{Name: "Retry-After of another family does not shorten a spent quota's reset", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(s, "p", refused(retryAfter(5*s), dialect(rl(100, 60*s, 0, 60*s), "github")), Want{
				PauseUntil: 61 * s, PauseReason: control.ReasonQuota,
			}),
			acq(6*s, "b", Want{Hold: control.ReasonQuota, Until: 61 * s}),
		}},
		// Requests in flight count against r until answered; an answer
		// with no fields gave its request back, and r bounded the
		// requests in flight, not those sent within t: sent one after
		// another, every request went (draft-11 §7: no response need
		// carry the fields). Each answer that does not state the quota
		// spends one of its r. With t, the fourth waits for its end;
		// without (DESIGN.md §1.7), it probes, and a fifth waits for the
		// probe's answer.
		{Name: "r is spent by answers that state nothing", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(100*ms, "p", ok(rl(0, 0, 3, 60*s)), Want{}),
			acq(1*s, "a", Want{Grant: true}),
			rel(1*s+100*ms, "a", ok(), Want{}),
			acq(2*s, "b", Want{Grant: true}),
			rel(2*s+100*ms, "b", ok(), Want{}),
			acq(3*s, "c", Want{Grant: true}),
			rel(3*s+100*ms, "c", ok(), Want{}),
			acq(4*s, "d", Want{Hold: control.ReasonQuota, Until: 60*s + 100*ms}),
			acq(5*s, "e", Want{Hold: control.ReasonQuota, Until: 60*s + 100*ms}),
		}},
		{Name: "an answer stating one quota spends no other", Steps: githubResources()},
		{Name: "r without t is spent by answers that state nothing", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(100*ms, "p", ok(rl(0, 0, 3, -1)), Want{}),
			acq(1*s, "a", Want{Grant: true}),
			rel(1*s+100*ms, "a", ok(), Want{}),
			acq(2*s, "b", Want{Grant: true}),
			rel(2*s+100*ms, "b", ok(), Want{}),
			acq(3*s, "c", Want{Grant: true}),
			rel(3*s+100*ms, "c", ok(), Want{}),
			acq(4*s, "d", Want{Grant: true, Probe: true}),
			acq(4*s, "e", Want{Hold: control.ReasonProbe}),
		}},
		{Name: "retry budget", Steps: []Step{
			// A floor of 2 retries (refilled at 2 a second), plus a fifth
			// of first attempts; a retry spends one.
			acq(0, "a", Want{Grant: true, Probe: true}),
			rel(0, "a", refused(bare(s)), Want{Plan: &control.Plan{Wait: s, Pause: s, Reason: control.ReasonBackoff, Retry: true}, Retries: 1}),
			acq(s, "b", Want{Grant: true, Probe: true}),
			rel(s, "b", control.Outcome{Refused: true, Refusal: bare(2 * s)}, Want{Plan: &control.Plan{Wait: 2 * s, Pause: 2 * s, Reason: control.ReasonBackoff, Retry: true}, Retries: 2}),
		}},
		{Name: "abnormal usage stops retries", Steps: []Step{
			acq(0, "a", Want{Grant: true, Probe: true}),
			rel(0, "a", refused(control.Refusal{Wait: 2 * s, Given: true, Reason: control.ReasonRetryAfter, Retryable: true, MaxWait: time.Minute, Stop: true}), Want{
				Plan: &control.Plan{Wait: 2 * s, Pause: 2 * s, Reason: control.ReasonRetryAfter, Stop: true}, Retries: -1,
			}),
			acq(3*s, "b", Want{Grant: true, Probe: true}),
			rel(3*s, "b", refused(retryAfter(s)), Want{Plan: &control.Plan{Wait: s, Pause: s, Reason: control.ReasonRetryAfter, Denied: control.ReasonStopped}}),
		}},
		{Name: "r=0 without t backs off exponentially", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(0, 0, 0, -1)), Want{PauseUntil: s, PauseReason: control.ReasonBackoff}),
			acq(s, "a", Want{Grant: true, Probe: true}),
			rel(s, "a", ok(rl(0, 0, 0, -1)), Want{PauseUntil: 3 * s, PauseReason: control.ReasonBackoff}),
			acq(3*s, "b", Want{Grant: true, Probe: true}),
			rel(3*s, "b", ok(rl(0, 0, 0, -1)), Want{PauseUntil: 7 * s}),
		}},
		{Name: "learning and distrust", Steps: []Step{
			// A key that says nothing accepts 3, then refuses: the three
			// since the last pause are its quota, and the time until it
			// accepts again its window.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			acq(0, "a", Want{Grant: true}),
			rel(0, "a", ok(), Want{}),
			acq(0, "b", Want{Grant: true}),
			rel(0, "b", ok(), Want{}),
			acq(0, "c", Want{Grant: true}),
			rel(0, "c", refused(bare(4*s)), Want{Plan: &control.Plan{Wait: s, Pause: s, Reason: control.ReasonBackoff, Retry: true}}),
			acq(s, "d", Want{Grant: true, Probe: true}),
			// While measuring, the backoff is half the time refused so
			// far, but never below the refusal floor.
			rel(s, "d", refused(bare(2*s)), Want{Plan: &control.Plan{Wait: s, Pause: s, Reason: control.ReasonBackoff, Retry: true}}),
			acq(2*s, "e", Want{Grant: true, Probe: true}),
			rel(2*s, "e", ok(), Want{Learned: &Quota{Q: 3, W: 2 * s}}),
			// The learned quota paces: e counts, two more, then hold.
			acq(2*s, "f", Want{Grant: true}),
			rel(2*s, "f", ok(), Want{}),
			acq(2*s, "g", Want{Grant: true}),
			rel(2*s, "g", ok(), Want{}),
			acq(2*s, "h", Want{Hold: control.ReasonAdaptive, Until: 4 * s}),
			// A refusal while the headers said quota was left: they
			// are distrusted. (A new learned window begins with a lone
			// probe.)
			acq(4*s, "i", Want{Grant: true, Probe: true}),
			rel(4*s, "i", refused(retryAfter(0), rl(0, 0, 50, 60*s)), Want{Distrusted: true}),
		}},
		{Name: "leases expire", Config: lease, Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			// A request with a 5s deadline holds its slot until the end
			// of its 10s slot at most, then is counted no more.
			{At: 0, Acquire: "a", Deadline: 5 * s, Want: Want{Grant: true, InFlight: 1}},
			// Held by the ramp's one slot, until a's lease ends or, a's
			// answer not come, the probe timeout after the last grant
			// (see ramp.stallAt), whichever is sooner.
			acq(0, "c", Want{Hold: control.ReasonConcurrency, Wake: 3 * s}),
			// No answer in 3s: one more goes, and the timeout doubles.
			acq(3*s, "c", Want{Grant: true, InFlight: 2}),
			acq(3*s, "e", Want{Hold: control.ReasonConcurrency, Wake: 9 * s}),
			acq(10*s, "d", Want{Grant: true, InFlight: 2}),
			// The release of an expired lease frees nothing more.
			rel(11*s, "a", ok(), Want{InFlight: 2}),
		}},
		{Name: "budget ceilings", Config: control.Config{MaxRate: 2, MaxConcurrency: 1}, Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			acq(0, "a", Want{Hold: control.ReasonPace, Until: 500 * ms}),
			acq(500*ms, "b", Want{Grant: true}),
			acq(time.Second, "c", Want{Hold: control.ReasonConcurrency}),
		}},
		{Name: "concurrency policy", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(parse.Quota{Policy: "c", Unit: "concurrent-requests", Limit: 2, Remaining: -1, Reset: -1}), Want{}),
			acq(0, "a", Want{Grant: true}),
			acq(0, "b", Want{Grant: true}),
			acq(0, "c", Want{Hold: control.ReasonConcurrency}),
		}},
		{Name: "content bytes", Steps: []Step{
			// 300 bytes left within 10s, 100 bytes a response: three
			// requests in flight take it all.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", control.Outcome{First: true, Bytes: 100, Quotas: []parse.Quota{{Policy: "bw", Unit: "content-bytes", Limit: 1000, Window: 60 * s, Remaining: 300, Reset: 10 * s}}}, Want{}),
			acq(0, "a", Want{Grant: true}),
			acq(0, "b", Want{Grant: true}),
			acq(0, "c", Want{Grant: true}),
			acq(0, "d", Want{Hold: control.ReasonQuota, Until: 10 * s}),
		}},
		{Name: "forget", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(0, 0, 0, 30*s)), Want{PauseUntil: 30 * s}),
			{At: s, Forget: true, Want: Want{PauseUntil: -1}},
			acq(s, "a", Want{Grant: true, Probe: true}),
		}},
		{Name: "forget keeps the requests in flight", Config: control.Config{MaxConcurrency: 1}, Steps: []Step{
			// Dropped with the rest, a request in flight let the next
			// go beside it, over MaxConcurrency.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(100, 60*s, 90, 30*s)), Want{}),
			acq(0, "a", Want{Grant: true, InFlight: 1}),
			{At: s, Forget: true, Want: Want{PauseUntil: -1, InFlight: 1}},
			acq(s, "b", Want{Hold: control.ReasonConcurrency}),
			rel(2*s, "a", ok(), Want{InFlight: -1}),
			acq(2*s, "b", Want{Grant: true, Probe: true}),
		}},
		{Name: "forget keeps MaxRate's next start", Config: control.Config{MaxRate: 1}, Steps: []Step{
			// The client's own ceiling, not what the key taught:
			// cleared with the rest, the next request went at once.
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(), Want{}),
			{At: 100 * ms, Forget: true, Want: Want{}},
			acq(100*ms, "a", Want{Hold: control.ReasonPace, Until: s}),
			acq(s, "a", Want{Grant: true, Probe: true}),
		}},
		{Name: "pause capped at a day", Steps: []Step{
			acq(0, "p", Want{Grant: true, Probe: true}),
			rel(0, "p", ok(rl(0, 0, 0, 400*24*time.Hour)), Want{PauseUntil: control.MaxPause}),
		}},
	}, append(append(append(streamTables(), robustTables()...), learnTables()...), append(append(append(slidingTables(), phaseTables()...), firstTables()...), shedTables()...)...)...)
}

// silentRamp shows the ramp of a key that states nothing and answers in
// 10ms: one probe, then two in flight, one more for each ten answers
// (two per answer at a round trip of 200ms, in proportion below it).
func silentRamp() []Step {
	return append([]Step{
		// A fresh key: one probe goes alone, and holds the others
		// for 3s at most.
		acq(0, "p", Want{Grant: true, Probe: true, InFlight: 1, Probing: 1}),
		acq(0, "b", Want{Hold: control.ReasonProbe, Wake: 3 * s}),
	}, rampSteps(10*ms, 10)...)
}

// silentRampFast shows the ramp of a key that states nothing and answers
// in 50µs, where two requests per answer times its round trip over 200ms
// is half a thousandth: each answer still counts a thousandth, so that
// the key grows, a request for each thousand answers (before, it counted
// nothing below a round trip of 100µs, and such a key stayed as it opened
// for ever).
func silentRampFast() []Step {
	return append([]Step{
		acq(0, "p", Want{Grant: true, Probe: true, InFlight: 1, Probing: 1}),
	}, rampSteps(50*time.Microsecond, 1000)...)
}

// slowProbe is a probe of a key that states nothing, answered at 0 after
// a round trip of 200ms: as a key that answers so slowly does, the key
// opens to four in flight, so that a table can send a flight at once.
func slowProbe() []Step {
	return []Step{
		acq(-200*ms, "p", Want{Grant: true, Probe: true}),
		rel(0, "p", ok(), Want{}),
	}
}

// rampSteps follows a probe granted at 0 to a key that answers every
// request in rtt: the probe's answer opens the key to one in flight, which
// stays one, answered one a round trip, until the n-th answer, which
// widens the key to two.
func rampSteps(rtt time.Duration, n int) []Step {
	steps := []Step{
		rel(rtt, "p", ok(), Want{InFlight: -1, Probing: -1}),
		acq(rtt, "a1", Want{Grant: true, InFlight: 1}),
		acq(rtt, "x", Want{Hold: control.ReasonConcurrency}),
	}
	at := rtt
	for i := 1; i < n; i++ {
		at += rtt
		steps = append(steps,
			rel(at, fmt.Sprintf("a%d", i), ok(), Want{InFlight: -1}),
			acq(at, fmt.Sprintf("a%d", i+1), Want{Grant: true, InFlight: 1}),
			acq(at, "x", Want{Hold: control.ReasonConcurrency}),
		)
	}
	at += rtt
	return append(steps,
		rel(at, fmt.Sprintf("a%d", n), ok(), Want{InFlight: -1}),
		acq(at, "c1", Want{Grant: true}),
		acq(at, "c2", Want{Grant: true, InFlight: 2}),
		acq(at, "x", Want{Hold: control.ReasonConcurrency}),
	)
}
