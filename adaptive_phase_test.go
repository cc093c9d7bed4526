package polite

import (
	"testing"
	"time"
)

// One request at a time to an origin that never queues, whose every
// fourth request is an error answered after 400ms (the others after
// 50ms): the smoothed latency rises by a fifth after each error and falls
// back over the next three answers. Decided at most once per smoothed
// round trip, about 150ms, the limit was judged every fourth answer, each
// time just after the error, at 1.35 times the baseline: it held at 1 for
// as long as the cycle went on (until the next measurement, 5 minutes
// later). Judged by the mean of the answers since the last decision when
// that is lower, 1.19 times, it grows, whatever the cycle's phase.
func TestGradientPeriodicErrorsNoLock(t *testing.T) {
	cycle := []time.Duration{ms(50), ms(50), ms(50), ms(400)}
	for phase := range cycle {
		g := measured(1, 16, ms(115))
		now := gradT0
		for i := phase; now.Sub(gradT0) < time.Minute; i++ {
			rtt := cycle[i%len(cycle)]
			now = now.Add(rtt)
			if rtt > ms(50) {
				g.observeError(now, rtt, 1)
			} else {
				g.observe(now, rtt, 1)
			}
		}
		if g.limit() < 2 {
			t.Errorf("phase %d: limit %d after a minute of the cycle (srtt %v, baseline %v); want it grown", phase, g.limit(), g.srtt, g.base)
		}
	}
}
