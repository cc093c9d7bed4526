package control

import (
	"testing"
	"time"
)

// While the learner measures a window, a refusal that gives no wait waits
// the floor doubled or half the time refused so far, whichever is shorter
// (leastWait; doc.go "While the learner ... measures"), so that the window
// is known to within half of itself. At the cap (a minute, half the time
// refused being 65 s) the wait was not shortened by the measurement, so
// spread lengthened it past the minute, up to 75 s: a probe later than
// half the time refused so far.
func TestSpreadNotPastMeasuringHalf(t *testing.T) {
	refusedFor := 130 * time.Second
	l := &Lease{measuring: instant(t0.Add(-refusedFor))}
	r := &Refusal{Backoff: time.Second, Retryable: true, MaxWait: 10 * time.Minute}
	p := Decide(t0, r, l, retryBudget{streak: 10, run: 10}, ^uint64(0))
	if half := refusedFor / 2; p.Wait > half || p.Pause > half {
		t.Errorf("measuring for %v: plan %+v: wait %v, pause %v, past half the time refused so far (%v); before the spread it was %v", refusedFor, p, p.Wait, p.Pause, half, BackoffMax)
	}
}
