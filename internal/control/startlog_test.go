package control

import (
	"math/rand/v2"
	"testing"
	"time"
)

// Once sized for its quota, the log adds and drops starts without
// allocating, and holds no more entries than the quota needs.
func TestStartLogRingAllocatesOnce(t *testing.T) {
	for _, tt := range []struct {
		q       int64
		entries int
	}{{10, 10}, {exactLog, exactLog}, {1000, logSlots + 2}} {
		w := int64(10 * time.Second)
		var l startLog
		now := instant(t0)
		step := w / tt.q / 2 // twice as fast as the quota: the log binds
		run := func() {
			if d := l.wait(now, tt.q, w); d > 0 {
				now += d
			}
			l.add(now, tt.q, w, 1)
			now += step
		}
		for range 4 * tt.q {
			run()
		}
		if allocs := testing.AllocsPerRun(1000, run); allocs != 0 {
			t.Errorf("q=%d: %v allocations per start, want 0", tt.q, allocs)
		}
		if l.len() > tt.entries || len(l.ring) > logCap(tt.q) {
			t.Errorf("q=%d: %d entries in a ring of %d, want at most %d in %d", tt.q, l.len(), len(l.ring), tt.entries, logCap(tt.q))
		}
	}
}

// A quota far beyond what is started keeps one entry: the log cannot
// bind.
func TestStartLogLooseWhereItCannotBind(t *testing.T) {
	const q, w = 1_000_000_000, int64(time.Second)
	var l startLog
	now := instant(t0)
	for range 100_000 {
		if d := l.wait(now, q, w); d != 0 {
			t.Fatalf("wait = %v, want 0", time.Duration(d))
		}
		l.add(now, q, w, 1)
		now += int64(time.Microsecond)
	}
	if l.len() != 1 || l.total != 100_000 {
		t.Errorf("%d entries counting %d starts, want 1 counting 100000", l.len(), l.total)
	}
}

// A large quota, used at its full rate from the start, loses at most an
// eighth of a window (the loose count read late), and a slot of pace per
// window after.
func TestStartLogLooseCostsLittle(t *testing.T) {
	const q, w = int64(800), int64(8 * time.Second)
	var l startLog
	now := instant(t0)
	end := now + 10*w
	n := int64(0)
	for now < end {
		if d := l.wait(now, q, w); d > 0 {
			now += d
			continue
		}
		l.add(now, q, w, 1)
		n++
		now += w / q // exactly the quota's rate
	}
	if least := 10*q - q/looseFrac - 10*q/logSlots - 1; n < least {
		t.Errorf("%d starts in 10 windows at q's own rate, want at least %d", n, least)
	}
}

// A start redated leaves the window with the start it is counted with:
// under 3 per 1s, a burst of three at 0 and a late one at 0.8s leave room
// for two starts at 1s, three once the late one is redated to 0. An entry
// left empty is removed.
func TestStartLogRedate(t *testing.T) {
	q, w := int64(3), int64(time.Second)
	now := instant(t0)
	late := now + 800*int64(time.Millisecond)
	third := func(l startLog) int64 { // the wait of a third start at 1s
		l.ring = append([]start(nil), l.ring...)
		l.add(now+w, q, w, 2)
		return l.wait(now+w, q, w)
	}
	var l startLog
	l.add(now, q, w, 3)
	l.add(late, q, w, 1)
	if d := third(l); d != late-now {
		t.Fatalf("before: a third start at 1s waits %v, want 0.8s", time.Duration(d))
	}
	l.redate(late, late-w)
	total := l.total
	if l.len() != 1 || l.first().n != total {
		t.Fatalf("after: %d entries, the first counting %d of %d; want one counting all", l.len(), l.first().n, total)
	}
	if d := third(l); d != 0 {
		t.Errorf("after: a third start at 1s waits %v, want 0", time.Duration(d))
	}
	var early startLog // a start before the window (a request slower than w) already left it
	early.add(now, q, w, 1)
	early.add(late, q, w, 1)
	early.redate(now, late)
	if early.len() != 2 || early.first().n != 1 {
		t.Errorf("a redate of a start before the window changed the log: %d entries, the first counting %d; want 2, 1", early.len(), early.first().n)
	}
	l.redate(now+5*w, now) // nothing kept at or after from
	if l.len() != 1 || l.total != total {
		t.Errorf("a redate of nothing changed the log: %d entries, total %d", l.len(), l.total)
	}
}

// The inline checks the grant makes, open and tally, agree with wait and
// add: open only where wait returns 0 with nothing to trim, and tally
// leaves the log as add(now, q, w, 1) does, whenever it takes the start.
func TestStartLogInlineMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tallied, opened := 0, 0
	for run := range 200 {
		q := []int64{1, 5, exactLog, exactLog + 1, 1000, 1 << 30}[run%6]
		w := int64(1+r.IntN(5)) * int64(time.Second)
		var a, b startLog
		now := instant(t0)
		for step := range 500 {
			now += r.Int64N(w / 4)
			if r.IntN(50) == 0 {
				now += 2 * w // an idle spell: the log empties
			}
			if a.open(now, q, w) {
				opened++
				if d := b.wait(now, q, w); d != 0 {
					t.Fatalf("run %d step %d: open, but wait says %d", run, step, d)
				}
				if !sameLog(&a, &b) {
					t.Fatalf("run %d step %d: open, but wait trimmed", run, step)
				}
			} else {
				da, db := a.wait(now, q, w), b.wait(now, q, w)
				if da != db {
					t.Fatalf("run %d step %d: wait %d and %d", run, step, da, db)
				}
			}
			if a.tally(now, q, w) {
				tallied++
			} else {
				a.add(now, q, w, 1)
			}
			b.add(now, q, w, 1)
			if !sameLog(&a, &b) {
				t.Fatalf("run %d step %d (q=%d): tally left %+v, add %+v", run, step, q, a, b)
			}
		}
	}
	if tallied == 0 || opened == 0 {
		t.Errorf("tally took %d starts, open passed %d: the inline paths went untested", tallied, opened)
	}
}

func sameLog(a, b *startLog) bool {
	if a.n != b.n || a.total != b.total {
		return false
	}
	for i := range a.n {
		if *a.get(i) != *b.get(i) {
			return false
		}
	}
	return true
}

// unlog takes back one start: its own, logged one by one, and the rest
// of the log reads as before; kept by slot, one no later, which the log
// then reads as made later (safe); with none that early, none.
func TestStartLogUnlog(t *testing.T) {
	w := int64(4 * time.Second)
	at := func(i int) int64 { return instant(t0) + int64(i)*int64(100*time.Millisecond) }
	var l startLog
	for i := range 5 {
		l.add(at(i), 5, w, 1)
	}
	if d := l.wait(at(5), 5, w); d <= 0 {
		t.Fatalf("5 of 5 started: no wait")
	}
	l.unlog(at(2))
	if d := l.wait(at(5), 5, w); d != 0 {
		t.Errorf("one of 5 taken back: wait %v, want none", time.Duration(d))
	}
	if l.total != 4 || l.len() != 4 {
		t.Errorf("after unlog: %d starts in %d entries, want 4 in 4", l.total, l.len())
	}
	for i, want := range []int{0, 1, 3, 4} {
		if got := l.get(i).at; got != at(want) {
			t.Errorf("entry %d at %v, want start %d's", i, time.Duration(got-at(0)), want)
		}
	}
	l.unlog(at(0) - 1) // before every start: none taken back
	if l.total != 4 {
		t.Errorf("unlog before every start took one back: %d left", l.total)
	}

	// Kept by slot (q above exactLog): the start's entry is its slot's
	// end, later than it; an earlier entry gives one up.
	var big startLog
	q := int64(1000)
	for i := range 400 {
		big.add(at(i/100), q, w, 1) // 100 starts in each of 4 slots
	}
	before := big.total
	big.unlog(at(3))
	if big.total != before-1 {
		t.Errorf("by slot: %d starts after unlog, want %d", big.total, before-1)
	}
	for i := 1; i < big.len(); i++ {
		if big.get(i).at <= big.get(i-1).at {
			t.Errorf("by slot: entries out of order after unlog")
		}
	}
}
