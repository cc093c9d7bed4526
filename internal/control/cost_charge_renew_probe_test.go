package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A quota of points restored whole (IETF, 10 per 10 s) is stated by an
// answer at 200 ms with 3 left and t=1 (a token bucket: one more point
// back in 1 s, not all ten). A request granted after that answer, in
// flight as the reset passes, ends at 1.3 s with an answer stating
// nothing (a connection error, or an endpoint that does not state the
// quota): its cost is charged to the window after, renewed on trust, and
// the stated window that ended is probed all the same: one request goes,
// the others wait for it (draft-11 §4.1.2). Renewed by that charge before
// any Acquire saw it stale, it was taken for whole: four went at once.
// Had the failure come before the reset, or never, the first request
// after the reset probes as well.
func TestCostQuotaRenewedByChargeStillProbed(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  *Outcome // C's answer at 1.3 s; nil: none yet
	}{
		{"no answer after the reset", nil},
		{"a failure after the reset", &Outcome{First: true, Failed: true, Bytes: -1}},
		{"an acceptance stating nothing after the reset", &Outcome{First: true, Served: true, Bytes: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s State
			cfg := &Config{}
			pts := Cost{Unit: "points", Amount: 1}
			quota := func(r int64, reset time.Duration) []parse.Quota {
				return []parse.Quota{{Policy: "pts", Dialect: "ietf", Unit: "points", Limit: 10, Window: 10 * time.Second, Remaining: r, Reset: reset}}
			}
			acq := func(at time.Duration) (*Lease, Hold, bool) {
				l := new(Lease)
				l.SetCost(pts)
				h, ok := s.Acquire(rAt(at), cfg, Ask{}, l)
				return l, h, ok
			}
			a, _, ok := acq(0)
			if !ok {
				t.Fatal("first request held")
			}
			s.Release(rAt(100*ms), cfg, a, &Outcome{First: true, Served: true, Bytes: -1, Quotas: quota(6, 10*time.Second)})
			d, _, ok := acq(150 * ms)
			if !ok {
				t.Fatal("D held")
			}
			s.Release(rAt(200*ms), cfg, d, &Outcome{First: true, Served: true, Bytes: -1, Quotas: quota(3, time.Second)}) // reset at 1.2 s
			c, _, ok := acq(300 * ms)                                                                                     // granted after D: its cost is charged by an answer stating nothing
			if !ok {
				t.Fatal("C held")
			}
			if tc.out != nil {
				s.Release(rAt(1300*ms), cfg, c, tc.out)
			}
			granted := 0
			for range 8 {
				if _, _, ok := acq(1300 * ms); ok {
					granted++
				}
			}
			if granted != 1 {
				t.Errorf("at 1.3 s, after the stated window ended at 1.2 s: %d of 8 requests of a point granted at once; want 1, the probe, the others waiting for its answer", granted)
			}
		})
	}
}
