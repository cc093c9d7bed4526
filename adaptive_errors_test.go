package polite

import "testing"

// An error answered (a 5xx), at fixed instants: below the smoothed
// latency, or before any sample, it does nothing; above it, it is a
// sample like any, in a baseline being measured too.
func TestGradientErrors(t *testing.T) {
	g := measured(20, 64, ms(50))
	g.observeError(gradT0.Add(ms(50)), ms(1), 20) // a quick 500
	if g.srtt != ms(50) || g.limit() != 20 {
		t.Errorf("after a quick error: srtt %v, limit %d; want 50ms and 20, unchanged", g.srtt, g.limit())
	}
	// An error after 450ms: srtt = 50 + (450-50)/8 = 100ms, twice the
	// baseline; the limit comes down as for a sample (see TestGradientSteps).
	g.observeError(gradT0.Add(ms(100)), ms(450), 20)
	if g.srtt != ms(100) || g.limit() != 19 {
		t.Errorf("after an error of 450ms: srtt %v, limit %d; want 100ms and 19", g.srtt, g.limit())
	}

	g = newGradient(4, 64)
	g.observeError(gradT0, ms(1), 4)
	if g.srtt != 0 || g.base != 0 {
		t.Errorf("an error before any sample: srtt %v, base %v; want none", g.srtt, g.base)
	}
	g.observe(gradT0.Add(ms(50)), ms(50), 1)
	g.observeError(gradT0.Add(ms(600)), ms(500), 1)
	if g.mN != 2 {
		t.Errorf("a slow error within the first measurement: %d samples measured, want 2", g.mN)
	}
}
