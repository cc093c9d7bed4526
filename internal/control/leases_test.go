package control

import (
	"math/rand/v2"
	"testing"
	"time"
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

// The inline paths of a grant and a release, reuse and lone, leave the
// leases as add and remove do whenever they apply.
func TestLeasesInlineMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	base := instant(t0)
	reused, lone := 0, 0
	for run := range 100 {
		lease := int64(1+r.IntN(60)) * int64(time.Second)
		var a, b leases
		var ends []int64
		now := base
		for step := range 300 {
			now += r.Int64N(lease / 8)
			if len(ends) < 4 && r.IntN(3) > 0 {
				until := now + lease - r.Int64N(lease/4)
				ea, ok := a.reuse(base, until, lease)
				if ok {
					reused++
				} else {
					ea = a.add(base, until, lease)
				}
				if eb := b.add(base, until, lease); ea != eb {
					t.Fatalf("run %d step %d: reuse or add ends at %d, add at %d", run, step, ea, eb)
				}
				ends = append(ends, ea)
			} else if len(ends) > 0 {
				i := r.IntN(len(ends))
				end := ends[i]
				ends = append(ends[:i], ends[i+1:]...)
				if a.lone(end) {
					lone++
				} else {
					a.remove(end, false)
				}
				b.remove(end, false)
			}
			if a.n != b.n || a.kept != b.kept || len(a.b) != len(b.b) || a.slot != b.slot {
				t.Fatalf("run %d step %d: %+v, want %+v", run, step, a, b)
			}
			for i := range a.b {
				if a.b[i] != b.b[i] {
					t.Fatalf("run %d step %d: %+v, want %+v", run, step, a.b, b.b)
				}
			}
		}
	}
	if reused == 0 || lone == 0 {
		t.Errorf("reuse took %d leases, lone ended %d: the inline paths went untested", reused, lone)
	}
}
