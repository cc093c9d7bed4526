package control

// leases keeps one invariant: every request granted and not yet released
// is counted in flight until its lease ends, and no longer. A process that
// dies mid-request, or a caller that never ends one, holds its slot only
// until then. Leases are kept by expiry slot, as counts: the state stays
// small however many requests are in flight, and the release of a lease
// whose slot has expired changes nothing.
type leases struct {
	b    []bucket // by end, ascending
	n    int64    // sum of the counts: requests in flight
	kept int64    // sum of the kept counts: those answered, their body still arriving

	// slot remembers the last slot add computed, whose bucket may have
	// gone since (a lone request's is dropped at its release): the next
	// request's falls in it nearly always, with no division. It is not
	// part of the state (not serialised).
	slot slotMemo
}

// slotMemo is a slot that add computed: the one that ends at end, of
// width g, counted from base.
type slotMemo struct{ base, g, end int64 }

// bucket counts the leases that end at end: n of them, k of which were
// answered and are kept in flight while their body arrives (see End).
type bucket struct {
	end int64
	n   int64
	k   int64
}

const (
	// leaseSlots is how many slots one longest lease spans: a lease ends
	// up to Config.Lease/leaseSlots after the instant asked.
	leaseSlots = 16
	maxBuckets = 2*leaseSlots + 2
)

// reuse counts one lease asked until until, as add(base, until, lease)
// would, where no lease is counted and until falls in the slot add
// computed last (requests that go one at a time), and reports whether it
// did, with when the lease ends: inline, with no division. Otherwise it
// changes nothing.
func (ls *leases) reuse(base, until, lease int64) (int64, bool) {
	m := &ls.slot
	if len(ls.b) != 0 || cap(ls.b) == 0 || m.base != base || m.g != max(lease/leaseSlots, 1) || until >= m.end || until < m.end-m.g {
		return 0, false
	}
	ls.b = append(ls.b, bucket{end: m.end, n: 1})
	ls.n++
	return m.end, true
}

// add counts one lease asked until until and returns when it ends: the end
// of until's slot, strictly after until. Slots are counted from base (the
// state's first use), so that every process sharing the state draws the
// same ones.
func (ls *leases) add(base, until, lease int64) int64 {
	g := max(lease/leaseSlots, 1)
	if k := len(ls.b); k > 0 && until < ls.b[k-1].end && until >= ls.b[k-1].end-g {
		// The newest slot, as nearly every request's: no division.
		ls.b[k-1].n++
		ls.n++
		return ls.b[k-1].end
	}
	end := ls.slot.end
	if m := ls.slot; m.base != base || m.g != g || until >= m.end || until < m.end-g {
		end = base + ((until-base)/g+1)*g
		ls.slot = slotMemo{base: base, g: g, end: end}
	}
	if k := len(ls.b); k == 0 || ls.b[k-1].end < end {
		// A new newest slot: no move.
		ls.n++
		ls.b = append(ls.b, bucket{end: end, n: 1})
		if len(ls.b) > maxBuckets {
			// Only after a clock gone back: merge the two oldest.
			ls.b[1].n += ls.b[0].n
			ls.b[1].k += ls.b[0].k
			ls.b = append(ls.b[:0], ls.b[1:]...)
		}
		return end
	}
	i := 0
	for i < len(ls.b) && ls.b[i].end < end {
		i++
	}
	ls.n++
	if i < len(ls.b) && ls.b[i].end == end {
		ls.b[i].n++
		return end
	}
	if len(ls.b) >= maxBuckets {
		// Only after a change of Config.Lease or a clock gone back: join
		// the next slot (a longer lease), or merge the two oldest.
		if i < len(ls.b) {
			ls.b[i].n++
			return ls.b[i].end
		}
		ls.b[1].n += ls.b[0].n
		ls.b[1].k += ls.b[0].k
		ls.b = append(ls.b[:0], ls.b[1:]...)
		i--
	}
	ls.b = append(ls.b, bucket{})
	copy(ls.b[i+1:], ls.b[i:])
	ls.b[i] = bucket{end: end, n: 1}
	return end
}

// remove ends one lease that ends at end, if its slot is still counted:
// one awaiting its answer, or one kept if kept is set. It reports whether
// it was counted.
func (ls *leases) remove(end int64, kept bool) bool {
	for i := range ls.b {
		b := &ls.b[i]
		if b.end != end || kept && b.k <= 0 || !kept && b.n-b.k <= 0 {
			continue
		}
		b.n--
		ls.n--
		if kept {
			b.k--
			ls.kept--
		}
		if b.n <= 0 {
			if i == len(ls.b)-1 {
				ls.b = ls.b[:i] // the newest, as nearly always: no move
			} else {
				ls.b = append(ls.b[:i], ls.b[i+1:]...)
			}
		}
		return true
	}
	return false
}

// lone ends the one request in flight, as remove(end, false) would, where
// it is the only one counted (requests that go one at a time), and reports
// whether it was: a check inline, with no loop. Otherwise it changes
// nothing.
func (ls *leases) lone(end int64) bool {
	if len(ls.b) == 1 {
		if b := &ls.b[0]; b.end == end && b.n == 1 && b.k == 0 {
			ls.b, ls.n = ls.b[:0], ls.n-1
			return true
		}
	}
	return false
}

// awaiting returns the requests in flight that have not been answered.
func (ls *leases) awaiting() int64 { return ls.n - ls.kept }

// has reports whether a lease awaiting its answer that ends at end is
// counted.
func (ls *leases) has(end int64) bool {
	for i := range ls.b {
		if ls.b[i].end == end {
			return ls.b[i].n > ls.b[i].k
		}
	}
	return false
}

// keep counts again, as kept, one lease that ends at end, which remove has
// just ended: its slot has room, since remove freed it.
func (ls *leases) keep(end int64) {
	i := 0
	for i < len(ls.b) && ls.b[i].end < end {
		i++
	}
	ls.n++
	ls.kept++
	if i < len(ls.b) && ls.b[i].end == end {
		ls.b[i].n++
		ls.b[i].k++
		return
	}
	ls.b = append(ls.b, bucket{})
	copy(ls.b[i+1:], ls.b[i:])
	ls.b[i] = bucket{end: end, n: 1, k: 1}
}

// reap drops the leases that have ended by now. It reports whether any
// did.
func (ls *leases) reap(now int64) bool {
	i := 0
	for i < len(ls.b) && ls.b[i].end <= now {
		ls.n -= ls.b[i].n
		ls.kept -= ls.b[i].k
		i++
	}
	if i == 0 {
		return false
	}
	ls.b = append(ls.b[:0], ls.b[i:]...)
	return true
}

// first returns when the earliest lease ends; zero when none is out.
func (ls *leases) first() int64 {
	if len(ls.b) == 0 {
		return 0
	}
	return ls.b[0].end
}

// last returns when the latest lease ends; zero when none is out.
func (ls *leases) last() int64 {
	if len(ls.b) == 0 {
		return 0
	}
	return ls.b[len(ls.b)-1].end
}
