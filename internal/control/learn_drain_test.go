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
	k.s.learn.relog(k.now, 1)                              // as the refusal that began the trial does
	k.s.learn.grownAt = k.now                              // and so
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
		(&learner{quota: &policy{q: 6, w: 7 * sec}, smooth: smoothOn, grownAt: 1}).drains(2, 4, 2*sec, 8*sec) {
		t.Errorf("at the even pace: the window's probe kept, or a drain held, for a round trip longer than the pace's spacing")
	}
	// The drain lasts slow at most from the refusal that began the trial
	// (grownAt), whatever starts came since; answers faster than the
	// pace's spacing drain too, to one awaiting; and a grownAt ahead of
	// now (a clock stepped back) drains nothing.
	l := &learner{quota: &policy{q: 6, w: 7 * sec}, smooth: smoothTrial, grownAt: 10 * sec, lastStart: 12 * sec}
	if !l.drains(12*sec, 4, 2*sec, 3*sec) || l.drains(13*sec, 4, 2*sec, 3*sec) {
		t.Errorf("on trial since 10 s, slow 3 s, a start at 12 s: drains at 12 s %v, at 13 s %v; want true, then false",
			l.drains(12*sec, 4, 2*sec, 3*sec), l.drains(13*sec, 4, 2*sec, 3*sec))
	}
	if !l.drains(11*sec, 2, sec/2, 3*sec) || l.drains(11*sec, 1, sec/2, 3*sec) {
		t.Errorf("answers in 0.5 s, the pace's spacing 7/6 s: two awaiting drain %v, one %v; want true, then false",
			l.drains(11*sec, 2, sec/2, 3*sec), l.drains(11*sec, 1, sec/2, 3*sec))
	}
	if l.drains(9*sec, 4, 2*sec, 3*sec) {
		t.Errorf("the trial begun at 10 s, asked at 9 s (a clock stepped back): drained; want nothing held past the bound")
	}
}

// A learned window at the even pace begins with no lone probe when the
// key answers slower than the pace's spacing: the others waited for the
// probe's answer, a window held fewer than q starts, and a rate step on
// trial, which holds once a whole window accepts q, neither held nor was
// refused (DESIGN.md §6). In bursts, on trial, or when the answers come
// within the spacing, the probe stays.
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
		{"even pace on trial, slow answers", smoothTrial, 2 * time.Second, true},
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

// trialKey returns a key answered in rtt, with n requests granted, and
// then its learned quota of 6 per 7 s on trial at the even pace, no step
// of growth to move it.
func trialKey(t *testing.T, rtt time.Duration, n int) (*shedKey, []Lease) {
	k := &shedKey{t: t, now: instant(t0), cfg: Config{Lease: time.Minute}}
	for range 3 {
		k.answered(rtt)
	}
	k.s.ramp.cwnd = 8
	ls := make([]Lease, n)
	for i := range ls {
		ls[i] = k.grant()
	}
	k.s.learn.quota = &policy{unit: unitRequests, q: 6, w: 7 * int64(time.Second)}
	k.s.learn.smooth, k.s.learn.smoothAt = smoothTrial, k.s.learn.cycle
	k.s.learn.pinned, k.s.learn.pinnedAt = stepsAll, k.now
	k.s.learn.relog(k.now, 1) // as the refusal that began the trial does
	k.s.learn.grownAt = k.now // and so
	return k, ls
}

// The drain waits for answers only: requests whose bodies still arrive
// (Outcome.Keep) await none, and held the key's every start until their
// leases ended, a minute on.
func TestEvenPaceTrialDrainSkipsStreams(t *testing.T) {
	k, ls := trialKey(t, 2*time.Second, 3)
	k.now += int64(2 * time.Second)
	for i := range ls {
		k.release(&ls[i], Outcome{First: true, Bytes: -1, Keep: true})
	}
	k.now += int64(2 * time.Second) // past the pace's spacing, within the slow answer's bound
	if _, h, ok := k.try(); !ok {
		t.Errorf("no request awaits its answer (%d bodies arriving): held %v, until %v", k.s.leases.n, h.Reason, h.until)
	}
}

// Requests that never answer hold the drain no longer than the ramp's
// slow answer (3 s, or four round trips: 8 s here). Before, they held it
// until their leases ended, a minute on.
func TestEvenPaceTrialDrainBounded(t *testing.T) {
	k, _ := trialKey(t, 2*time.Second, 3) // never answered
	start := k.now
	slow := k.s.ramp.slowAfter()
	k.now += 2 * int64(time.Second) // past the pace's spacing (7/6 s), within slow (four round trips, 8 s)
	_, h, ok := k.try()
	if ok {
		t.Fatal("three awaiting their answers, the pace leaving two: granted; want held")
	}
	if h.wake != start+slow {
		t.Errorf("held, waking in %v; want the slow answer's bound, %v", time.Duration(h.wake-start), time.Duration(slow))
	}
	k.now = start + slow
	if _, h, ok := k.try(); !ok {
		t.Errorf("%v on, nothing answered: held %v; want granted", time.Duration(slow), h.Reason)
	}
}

// The drain's bound is counted from the refusal that began the trial, not
// from each start: a caller that sends one request at a time, with
// requests that hang beside it, was held to a start every slow answer (3
// s) until its trial ended, 30 s on: 209 starts in a minute, where it
// makes 400 with none hanging.
func TestEvenPaceTrialDrainOncePerTrial(t *testing.T) {
	run := func(hang int) (starts int) {
		rtt := 150 * time.Millisecond
		k := &shedKey{t: t, now: instant(t0), cfg: Config{Lease: 10 * time.Minute}}
		for range 3 {
			k.answered(rtt)
		}
		k.s.ramp.cwnd = 8
		for range hang {
			k.grant() // never answered
		}
		k.s.learn.quota = &policy{unit: unitRequests, q: 10, w: int64(time.Second)}
		k.s.learn.smooth, k.s.learn.smoothAt = smoothTrial, k.s.learn.cycle
		k.s.learn.pinned, k.s.learn.pinnedAt = stepsAll, k.now
		k.s.learn.relog(k.now, 1)
		k.s.learn.grownAt = k.now
		for end := k.now + int64(time.Minute); k.now < end; {
			l, h, ok := k.try()
			if !ok {
				next := h.until
				if next == 0 {
					next = h.wake
				}
				if next <= k.now {
					t.Fatalf("%d hanging: held (%v) with nothing to wait for", hang, h.Reason)
				}
				k.now = next
				continue
			}
			starts++
			k.now += int64(rtt)
			k.release(&l, shedOK)
		}
		return starts
	}
	alone, beside := run(0), run(3)
	t.Logf("one caller, a minute: %d starts, %d with three requests hanging", alone, beside)
	if beside < alone*9/10 {
		t.Errorf("one caller beside three requests that hang: %d starts in a minute, want about the %d it makes alone", beside, alone)
	}
}
