package control

import (
	"testing"
	"time"
)

// A quota refilled continuously at a rate not known, 100 tokens left and
// whole again in 10 s, one request in flight (granted before the reset)
// until long after: a request of 500 tokens waits for it or for the
// reset, goes at the reset as the quota's probe, and those that follow
// wait for the probe's answer, or for the probe wait (3 s) to pass, when
// the next probes. Steps at fixed instants, in seconds after the
// observation.
func TestCostProbeOneAtATime(t *testing.T) {
	now := instant(t0)
	sec := int64(time.Second)
	cs := costs{
		units:  []costUnit{{name: "tokens"}},
		quotas: []costQuota{{name: "tokens", refill: true, q: -1, live: true, r: 100, at: now, deadline: now + 10*sec}},
	}
	seq := uint64(1)
	rel := func(t int64) int64 { // seconds after the observation; 0 for none
		if t == 0 {
			return 0
		}
		return (t - now) / sec
	}
	for _, step := range []struct {
		t      int64 // seconds after the observation
		held   bool  // the request of 500 is held; else it is granted
		by     int64 // when it looks again besides a request ending (seconds; 0: none)
		inWait bool  // it waits for a request in flight to end
	}{
		{t: 5, held: true, by: 10, inWait: true},
		{t: 10, held: false},                      // the reset: the probe
		{t: 11, held: true, by: 13, inWait: true}, // the probe is out
		{t: 13, held: false},                      // its wait passed: another probes
		{t: 14, held: true, by: 16, inWait: true},
	} {
		at := now + step.t*sec
		want := Cost{Tokens: 500}
		_, inWait, by, held, _ := cs.admit(at, &want, 0, 1)
		if held != step.held || rel(by) != step.by || inWait != step.inWait {
			t.Fatalf("at %d s: held %v, looks again at %d s, waits for one in flight %v; want %v, %d s, %v",
				step.t, held, rel(by), inWait, step.held, step.by, step.inWait)
		}
		if !held {
			seq++
			cs.reserve(&want, at+time.Hour.Nanoseconds(), &Lease{seq: seq, start: at}, 3*sec)
		}
	}

	// A quota of a known refill rate, held for what is in flight: it
	// looks again when one ends, not at its reset, when it would be held
	// again.
	known := costs{
		units:  []costUnit{{name: "tokens", n: 900, res: []reservation{{lo: 2, hi: 2, end: now + 3600*sec, n: 900}}}},
		quotas: []costQuota{{name: "tokens", refill: true, q: 1000, live: true, r: 500, rate: 50.0 / float64(sec), at: now, deadline: now + 10*sec}},
	}
	want := Cost{Tokens: 500}
	if _, inWait, by, held, _ := known.admit(now+sec, &want, 0, 1); !held || !inWait || by != 0 {
		t.Errorf("known rate: held %v, waits for one in flight %v, looks again at %d s; want true, true, none", held, inWait, rel(by))
	}
}
