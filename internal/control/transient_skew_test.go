package control

import (
	"testing"
	"time"
)

// Two processes share a key through a Store; process A's clock runs
// 300 ms or 900 ms ahead of B's (within skewMax). A gateway fails
// everything; each process sends a request every 100 ms (true time), A
// and B alternating. Failed flights count toward an outage at most one a
// second (doc.go, "Retries"): over 15 s, about 15, and no outage (40).
// Counted at once whenever a failure came before the last counted, B
// counted each of its failures after A's count and moved the mark back
// for A to count again: 38 at 300 ms, and at 900 ms 43, the key paused
// 4 s into the failures.
func TestTransientSkewCountsAtMostOneASecond(t *testing.T) {
	for _, skew := range []time.Duration{300 * time.Millisecond, 900 * time.Millisecond} {
		t.Run(skew.String(), func(t *testing.T) { skewRun(t, skew) })
	}
}

func skewRun(t *testing.T, skew time.Duration) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var s State
	cfg := Config{}
	counted := 0
	paused := time.Duration(-1)
	for i := range 150 { // 15 s of true time
		tr := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		now := tr // B
		if i%2 == 0 {
			now = tr.Add(skew) // A, ahead
		}
		var l Lease
		if _, ok := s.Acquire(now, &cfg, Ask{}, &l); !ok {
			if paused < 0 {
				paused = tr.Sub(t0)
			}
			continue
		}
		before := s.retry.run
		out := gateway502
		out.Rand = uint64(i + 1)
		s.Release(now.Add(10*time.Millisecond), &cfg, &l, &out)
		if s.retry.run > before {
			counted++
		}
	}
	t.Logf("flights counted in 15 s: %d (run %d), outage %v, first held at %v", counted, s.retry.run, s.retry.outage(), paused)
	if counted > 16 || s.retry.outage() {
		t.Errorf("with a %v skew between two processes, %d failed flights counted in 15 s of true time (at most one a second promised: ~15); outage %v, paused at %v", skew, counted, s.retry.outage(), paused)
	}
}
