package control

import (
	"testing"
	"time"
)

// The estimate of the server's clock is zero while the Dates' bounds hold
// it, else their lower bound, behind as ahead: an instant the server
// states is never read before it. Behind, it was the upper bound, nearer
// zero: 0.96 s early after a burst dated just after the server's second
// turned.
func TestClockEstimateLowerBoundWhenApart(t *testing.T) {
	const (
		ms  = int64(time.Millisecond)
		sec = int64(time.Second)
	)
	at := func(d int64) int64 { return 1000*sec + d } // our clock
	for _, tt := range []struct {
		name string
		off  int64 // the server's clock minus ours
		sent []int64
		want int64
	}{
		// Requests sent 0 to 40 ms past our seconds, answered 20 ms later.
		{"agree", 0, []int64{0, 20 * ms, 40 * ms}, 0},
		{"90s behind", -90 * sec, []int64{0, 20 * ms, 40 * ms}, -90*sec - 20*ms},
		{"90s ahead", 90 * sec, []int64{0, 20 * ms, 40 * ms}, 90*sec - 20*ms},
		// 0.4 s behind: the Date of a request sent 100 ms past our
		// second proves the server behind (its second had not turned
		// at 1000.1 s + 20 ms: at most -0.1 s); the one sent 700 ms
		// past, dated after it turned, bounds it from below at -0.72 s.
		{"0.4s behind, proved", -400 * ms, []int64{0, 100 * ms, 700 * ms}, -720 * ms},
		{"0.4s behind, not proved", -400 * ms, []int64{0, 700 * ms}, 0},
	} {
		var s State
		for _, d := range tt.sent {
			start, now := at(d), at(d+20*ms)
			date := (now + tt.off) / sec * sec // whole seconds, when the answer was made
			s.dated(&Lease{start: start}, time.Duration(date-now), now)
		}
		if s.skew != tt.want || s.skew < s.skewLo || s.skew > s.skewHi || (s.skew != 0 && s.skew > tt.off) {
			t.Errorf("%s: estimate %v within [%v, %v], want %v (the offset %v)", tt.name, time.Duration(s.skew), time.Duration(s.skewLo), time.Duration(s.skewHi), time.Duration(tt.want), time.Duration(tt.off))
		}
	}
}
