package control

import (
	"testing"
	"time"
)

// ramp.probeTimeout promises "a probe that does not answer holds the key
// for 3 seconds at most, or four of the key's smoothed round trips when
// that is longer, doubled for each probe in a row that timed out"
// (DESIGN.md §5), capped at maxSpan. With a smoothed round trip of 10 h
// (answers that hang for hours) and 16 probes in a row timed out,
// 4·rtt<<16 overflowed int64: the timeout was negative, or 262µs, and
// the probe held the key not at all.
func TestProbeTimeoutNoOverflow(t *testing.T) {
	for _, c := range []struct {
		rtt    time.Duration
		misses int32
	}{
		{10 * time.Hour, maxMisses},
		{maxSpan, 7},
		{1<<46 + 1, maxMisses}, // 19.5 h: wraps to 262 µs
	} {
		r := ramp{rtt: int64(c.rtt), misses: c.misses}
		if d := r.probeTimeout(); d < probeWait {
			t.Errorf("rtt %v, %d misses: probeTimeout %v, want at least %v (capped at maxSpan %v)",
				c.rtt, c.misses, time.Duration(d), time.Duration(probeWait), maxSpan)
		}
	}
	// Through the State: with a round trip of 2^46+1 ns (19.5 h), the
	// shifted timeout wraps to 2^18 ns, and 1 ms after the probe another
	// request probes while the first awaits its answer.
	k := &shedKey{t: t, now: instant(t0)}
	k.s.ramp = ramp{rtt: 1<<46 + 1, misses: maxMisses, cwnd: 1}
	k.grant()
	held := time.Duration(k.s.ramp.probeEnd - k.now)
	k.now += int64(time.Millisecond)
	if l, _, ok := k.try(); ok {
		t.Errorf("1 ms after the probe, while it awaits its answer, another request granted (probe %v): the probe held the key %v",
			l.Probe(), held)
	}
}

// A stall (ramp.stalled) widens the window by one. Widened to every
// request awaiting its answer, those sent before a pause included, the
// probe after the pause opened the ramp at 2, the first stall made it 21,
// and once the requests sent before the pause ended (their leases
// expired), 20 went at one instant into the server that had just refused.
func TestStallWidensByOne(t *testing.T) {
	k := &shedKey{t: t, now: instant(t0), cfg: Config{Lease: time.Minute}}
	for range 40 {
		k.answered(50 * time.Millisecond)
	}
	var ls []Lease
	for {
		l, _, ok := k.try()
		if !ok {
			break
		}
		ls = append(ls, l)
	}
	if len(ls) < 10 {
		t.Fatalf("only %d in flight before the refusal", len(ls))
	}
	refused := Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
		Refusal: Refusal{Wait: time.Second, Given: true, Retryable: true, MaxWait: time.Minute}}
	k.release(&ls[0], refused) // pauses the key 1s; the others hang
	k.now += int64(time.Second + time.Millisecond)
	p := k.grant()
	if !p.Probe() {
		t.Fatal("no probe after the pause")
	}
	k.now += int64(50 * time.Millisecond)
	k.release(&p, shedOK)
	before := k.s.ramp.cwnd
	t.Logf("after the probe: cwnd %d, awaiting %d", before, k.s.leases.awaiting())

	// One stall: one more goes.
	k.now += k.s.ramp.probeTimeout()
	n := 0
	for {
		if _, _, ok := k.try(); !ok {
			break
		}
		n++
	}
	t.Logf("at the stall: %d granted, cwnd now %d", n, k.s.ramp.cwnd)

	// The requests sent before the pause never answer: their leases end.
	k.now = ls[len(ls)-1].end + int64(time.Millisecond)
	burst := 0
	for {
		if _, _, ok := k.try(); !ok {
			break
		}
		burst++
	}
	if burst > int(before) {
		t.Errorf("once the %d requests sent before the pause expired, %d granted at one instant (ramp opened at %d after the pause; cwnd %d)",
			len(ls)-1, burst, before, k.s.ramp.cwnd)
	}
}

// A stall (the window full, nothing answered in the probe timeout) that
// comes as the learned quota's cycle renews: acquire rechecks the ramp
// (closed, a lone probe whose answer the others wait for). ramp.stalled
// set probeEnd to now, the instant the probe holds the key until, after
// it: the probe held nothing, and a second request went at the same
// instant, as another probe. The probe's grant widens nothing.
func TestStallOnRecheckLetsOne(t *testing.T) {
	k := &shedKey{t: t, now: instant(t0), cfg: Config{Lease: time.Minute}}
	for range 2 {
		k.answered(50 * time.Millisecond)
	}
	if !k.s.ramp.open || k.s.ramp.cwnd != 1 {
		t.Fatalf("setup: ramp open %v cwnd %d", k.s.ramp.open, k.s.ramp.cwnd)
	}
	w := int64(10 * time.Second)
	k.s.learn.quota = &policy{unit: unitRequests, q: 100, w: w}
	a := k.grant() // hangs
	_ = a
	k.now += k.s.ramp.probeTimeout()
	// The learned quota held a request back in a cycle begun a window ago.
	k.s.learn.held, k.s.learn.cycleStart = true, k.now-w
	if !k.s.learn.renews(k.now) {
		t.Fatal("setup: the cycle does not renew")
	}
	l1, h, ok := k.try()
	if !ok {
		t.Fatalf("the stall let nothing go: held %v", h.Reason)
	}
	t.Logf("first: probe %v; ramp open %v probeSeq %d probeEnd-now %v", l1.Probe(), k.s.ramp.open, k.s.ramp.probeSeq, time.Duration(k.s.ramp.probeEnd-k.now))
	if l2, _, ok := k.try(); ok {
		t.Errorf("a second request granted at the same instant (probe %v): the stall let two go, the recheck's probe held nothing (probeEnd = now)", l2.Probe())
	}
}
