package control

import (
	"math/rand/v2"
	"testing"
	"time"
)

// A server that states nothing keeps a fixed window of 10 a second, and
// refuses with a constant Retry-After: 1; at minute 5 its limit is lowered
// for real to 10 per 5 minutes. 4 workers, 50 ms round trip, 4 hours.
//
// A measurement doubles the learned window at most, and the next one that
// goes beyond the doubling too takes the window whole. Capped at each,
// the window grew by the refusal floor, a second per server window of 5
// minutes, at a few hundred refusals an hour, hours after the change.
func TestLearnedWindowAfterLimitLowered(t *testing.T) {
	ra1 := func() (time.Duration, bool) { return time.Second, true }
	fast, slow := fixedWindow(10, time.Second, ra1), fixedWindow(10, 5*time.Minute, ra1)
	m := &sim{t: t, lat: 50 * time.Millisecond, rng: rand.New(rand.NewPCG(1, 2))}
	m.server = func(at time.Duration) simAnswer {
		if at < 5*time.Minute {
			return fast(at)
		}
		return slow(at - 5*time.Minute)
	}
	end := 4 * time.Hour
	m.run(4, end)
	for at := time.Duration(0); at < end; at += time.Hour {
		t.Logf("hour from %v: accepted %d, refused %d", at, m.count(at, at+time.Hour), m.refusedIn(at, at+time.Hour))
	}
	v := m.s.View(ht0.Add(end)).Learned
	t.Logf("learned at %v: %d per %v", end, v.Quota, v.Window)
	if a, r := m.count(3*time.Hour, end), m.refusedIn(3*time.Hour, end); r > a {
		t.Errorf("the fourth hour after the limit was lowered to 10 per 5 minutes: %d refused for %d accepted, learned %d per %v: the learned window does not reach the server's", r, a, v.Quota, v.Window)
	}
}
