package polite

import (
	"testing"
	"time"
)

// Restraint.Adaptive's doc said the limit is halved "for at most 16 round
// trips" every 5 minutes, where it stayed halved for 17. Under Restraint's
// default limit of 4 (2 while draining, too few responses to end the
// measurement by count), the limit stays halved for 17 at most, as the
// doc now says.
func TestRestraintDrainAtMost17RoundTrips(t *testing.T) {
	g := newGradient(restraintInitial, defaultRestraint)
	now := time.Unix(1000, 0)
	const rtt = 100 * time.Millisecond
	var from, to time.Time
	for range 1_000_000 {
		lim := g.limit()
		now = now.Add(rtt / time.Duration(lim)) // lim in flight, each rtt long
		was := g.mDrain
		g.observe(now, rtt, lim)
		switch {
		case !was && g.mDrain && from.IsZero():
			from = now
		case was && !g.mDrain && !from.IsZero():
			to = now
		}
		if !to.IsZero() {
			break
		}
	}
	if from.IsZero() || to.IsZero() {
		t.Fatal("no drain seen")
	}
	if rtts := float64(to.Sub(from)) / float64(rtt); rtts > gradDrainRTTs {
		t.Errorf("the limit stayed halved for %.1f round trips, want at most %d", rtts, gradDrainRTTs)
	}
}
