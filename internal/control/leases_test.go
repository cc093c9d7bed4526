package control

import (
	"math/rand/v2"
	"testing"
)

// TestLeasesSlots checks that add, with its memo of the last slot, gives
// every lease the end of its slot as the division computes it, and that
// the counts add up, over random adds and removes with varying bases,
// lease lengths and instants, some of them going back.
// (A lease of a new length may join a slot of the old one, as it always could.)
func TestLeasesSlots(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ls leases
	var out []int64
	base, lease, now := int64(1000), int64(1600), int64(5000)
	mixed := false  // slots of another lease length are counted: add may join them
	merged := false // slots were merged (too many): their leases end later
	for i := range 20000 {
		if len(ls.b) == 0 {
			mixed, merged = false, false
		}
		switch r.IntN(50) {
		case 0:
			if len(out) == 0 { // a new incarnation of the state
				base = r.Int64N(10000)
			}
		case 1:
			lease = 16 + r.Int64N(5000)
			mixed = len(ls.b) > 0
		case 2:
			now -= r.Int64N(3000) // a clock gone back
		}
		now += r.Int64N(300)
		if len(out) > 0 && r.IntN(2) == 0 {
			j := r.IntN(len(out))
			if !ls.remove(out[j], false) && !merged {
				t.Fatalf("step %d: remove(%d) found no lease", i, out[j])
			}
			out = append(out[:j], out[j+1:]...)
			continue
		}
		until := max(now+lease, base)
		g := max(lease/leaseSlots, 1)
		want := base + ((until-base)/g+1)*g
		full := len(ls.b) >= maxBuckets // add may join a later slot, or merge two
		merged = merged || full
		end := ls.add(base, until, lease)
		if !full && !mixed && end != want {
			t.Fatalf("step %d: add(%d, %d, %d) = %d, want %d", i, base, until, lease, end, want)
		}
		out = append(out, end)
		var n int64
		for k, b := range ls.b {
			if k > 0 && b.end <= ls.b[k-1].end || b.n < 1 {
				t.Fatalf("step %d: buckets out of order or empty: %+v", i, ls.b)
			}
			n += b.n
		}
		if n != ls.n || !merged && ls.n != int64(len(out)) || len(ls.b) > maxBuckets {
			t.Fatalf("step %d: %d counted in buckets, n %d, %d out, %d buckets", i, n, ls.n, len(out), len(ls.b))
		}
	}
}
