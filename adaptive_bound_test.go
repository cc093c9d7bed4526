package polite

import "testing"

// A bound below the latency (a 5xx answer, a request that timed out) at
// fixed instants: below the smoothed latency it does nothing; above it, it
// moves it as a sample does, and the limit with it; before any sample, and
// within a measurement of the baseline, it measures nothing.
func TestGradientBound(t *testing.T) {
	g := measured(20, 64, ms(50))
	g.bound(gradT0.Add(ms(50)), ms(1), 20) // a quick 500
	if g.srtt != ms(50) || g.limit() != 20 {
		t.Errorf("after a bound of 1ms: srtt %v, limit %d; want 50ms and 20, unchanged", g.srtt, g.limit())
	}
	// A timeout after 450ms: srtt = 50 + (450-50)/8 = 100ms, twice the
	// baseline; the limit comes down as for a sample (see TestGradientSteps).
	g.bound(gradT0.Add(ms(100)), ms(450), 20)
	if g.srtt != ms(100) || g.limit() != 19 {
		t.Errorf("after a bound of 450ms: srtt %v, limit %d; want 100ms and 19", g.srtt, g.limit())
	}

	g = newGradient(4, 64)
	g.bound(gradT0, ms(1), 4)
	if g.srtt != 0 || g.base != 0 {
		t.Errorf("a bound before any sample: srtt %v, base %v; want none", g.srtt, g.base)
	}
	g.observe(gradT0.Add(ms(50)), ms(50), 1)
	g.bound(gradT0.Add(ms(100)), ms(500), 1)
	if g.base != ms(50) || g.mN != 1 {
		t.Errorf("a bound within the first measurement: base %v of %d samples; want 50ms of 1", g.base, g.mN)
	}
}
