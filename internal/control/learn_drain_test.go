package control

import (
	"testing"
	"time"
)

// The even pace on trial, begun by a learned burst's refusal, waits for
// the requests in flight to drain to its own level (the pace leaves
// rtt*q/w in flight, and one more) before its first start: sent beside
// the burst still in flight, against a server that limits the requests in
// flight, it was refused by the limit, and the trial failed for a rate it
// never tried (TestLimitInFlightLearnedSlowAnswers). The hold has no
// instant: the key waits for answers, as for a slot in flight. Off trial,
// nothing is held so.
func TestEvenPaceTrialDrainsBurst(t *testing.T) {
	sec := int64(time.Second)
	k := &shedKey{t: t, now: instant(t0), cfg: Config{Lease: time.Minute}}
	for range 3 {
		k.answered(2 * time.Second)
	}
	if rtt := k.s.ramp.rtt; rtt != 2*sec {
		t.Fatalf("setup: rtt %v, want 2s", time.Duration(rtt))
	}
	// A burst of four in flight, then the learned quota of 6 per 7 s on
	// trial at the even pace: it leaves 2*6/7 (1, rounded down) in
	// flight, and one more: two.
	var burst [4]Lease
	for i := range burst {
		burst[i] = k.grant()
	}
	k.s.learn.quota = &policy{unit: unitRequests, q: 6, w: 7 * sec}
	k.s.learn.smooth = smoothTrial
	k.s.learn.pinned, k.s.learn.pinnedAt = stepsAll, k.now // no step of growth moves the level under test
	k.now += 2 * sec                                       // the pace's spacing (7/6 s) has passed: only the drain holds
	_, h, ok := k.try()
	if ok || h.Reason != ReasonAdaptive || h.until != 0 {
		t.Fatalf("four in flight, the even pace on trial: granted %v, held %v until %v; want held for answers, ReasonAdaptive, no instant", ok, h.Reason, h.until)
	}
	k.release(&burst[0], shedOK)
	if _, h, ok := k.try(); ok {
		t.Fatalf("three in flight: granted; want held")
	} else if h.until != 0 {
		t.Fatalf("three in flight: held until an instant (%v)", h.Reason)
	}
	k.release(&burst[1], shedOK)
	if _, h, ok := k.try(); !ok {
		t.Fatalf("two in flight, the pace's own level and one more: held (%v), want granted", h.Reason)
	}

	// At the even pace itself, off trial, the requests in flight hold
	// nothing: the pace was tried.
	if !(&learner{quota: &policy{q: 6, w: 7 * sec}, smooth: smoothOn}).probeStalls(2*sec) ||
		(&learner{quota: &policy{q: 6, w: 7 * sec}, smooth: smoothOn}).drains(4, 2*sec) {
		t.Errorf("at the even pace: the window's probe kept, or a drain held, for a round trip longer than the pace's spacing")
	}
}

// A learned window at the even pace begins with no lone probe when the
// key answers slower than the pace's spacing: the others waited for the
// probe's answer, a window held fewer than q starts, and a rate step on
// trial, which holds once a whole window accepts q, neither held nor was
// refused (DESIGN.md §6). In bursts, or when the answers come within the
// spacing, the probe stays.
func TestEvenPaceWindowWithoutProbe(t *testing.T) {
	sec := int64(time.Second)
	for _, c := range []struct {
		name   string
		smooth uint8
		rtt    time.Duration
		probe  bool
	}{
		{"even, slow answers", smoothOn, 2 * time.Second, false},
		{"even, fast answers", smoothOn, 500 * time.Millisecond, true},
		{"bursts, slow answers", 0, 2 * time.Second, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := &shedKey{t: t, now: instant(t0), cfg: Config{Lease: time.Minute}}
			for range 3 {
				k.answered(c.rtt)
			}
			k.s.learn.quota = &policy{unit: unitRequests, q: 6, w: 7 * sec}
			k.s.learn.smooth = c.smooth
			// A cycle begun a window ago, in which the learned quota held
			// a request back: the next start renews it.
			k.s.learn.held, k.s.learn.cycleStart, k.s.learn.cycleEpoch = true, k.now-7*sec, k.s.epoch
			k.s.learn.quota.log.reset()
			if !k.s.learn.renews(k.now) {
				t.Fatal("setup: the cycle does not renew")
			}
			if l := k.grant(); l.Probe() != c.probe {
				t.Errorf("the start that renews the cycle: a lone probe %v, want %v", l.Probe(), c.probe)
			}
		})
	}
}
