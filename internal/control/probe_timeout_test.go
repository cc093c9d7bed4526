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
