package control_test

import (
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/internal/control/controltest"
)

// A step run on the state before the previous step (a Store's try that
// lost a compare-and-swap, on its cached copy, or one that went back to
// older data) leaves a state whose binary form MarshalBinary writes;
// UnmarshalBinary must read it back. Nine steps of the tables, releases of
// refusals whose grants the older state never saw, wrote states it
// rejected.
func TestStaleStepRoundTrips(t *testing.T) {
	t0 := time.Now()
	for _, tab := range controltest.Tables() {
		var cur, prev []byte
		i := 0
		controltest.Replay(tab, t0, func(step func(*control.State) controltest.Result) controltest.Result {
			i++
			if prev != nil || i > 1 {
				var s control.State
				if err := s.UnmarshalBinary(prev); err != nil {
					t.Fatal(err)
				}
				step(&s)
				b, err := s.MarshalBinary()
				if err != nil {
					t.Errorf("%s step %d: MarshalBinary: %v", tab.Name, i, err)
				} else {
					var back control.State
					if err := back.UnmarshalBinary(b); err != nil {
						t.Errorf("%s: step %d (release %q) on the state before the previous step: MarshalBinary wrote %d bytes UnmarshalBinary rejects: %v", tab.Name, i, tab.Steps[i-1].Release, len(b), err)
					}
				}
			}
			var s control.State
			if err := s.UnmarshalBinary(cur); err != nil {
				t.Fatal(err)
			}
			r := step(&s)
			b, _ := s.MarshalBinary()
			prev, cur = cur, b
			return r
		})
	}
}
