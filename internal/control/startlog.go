package control

// startLog keeps the starts that pace a q-per-w quota: no more than q
// starts in any span of w. It keeps what pacing needs and no more: for a q
// of up to exactLog, the q latest starts one by one; for a larger q,
// counts of starts per slot of w/logSlots, each read as if it had started
// at the end of its slot, which never lets more than q start in a span of
// w and costs at most one slot of pace.
//
// Where the log cannot bind, it keeps next to nothing: while a large q
// (beyond exactLog) has fewer than q/looseFrac starts logged, no span of w
// can hold q of them, and they are kept as one count, read as if they had
// all started at the latest of them (later is safe). Once that count
// reaches q/looseFrac, the starts that follow are kept by slot again; the
// count read late costs at most w/looseFrac of pace, once.
//
// The entries are a ring, sized once for the quota (q+1 entries for an
// exact q, logSlots+2 for one kept by slot, never more than maxLogLen):
// adding a start or dropping the oldest moves nothing and allocates
// nothing. Only a quota that grows from one size to the next reallocates.
type startLog struct {
	ring  []start // len(ring) is the capacity; the entries are ring[head], ring[head+1], ... modulo len(ring)
	head  int
	n     int   // entries, by at, ascending
	total int64 // sum of the counts
}

// start counts n starts that leave the window at at+w.
type start struct {
	at, n int64
}

const (
	exactLog  = 128
	logSlots  = 64
	maxLogLen = exactLog + logSlots + 2
	looseFrac = 8
)

// logCap returns the ring's capacity for a quota of q.
func logCap(q int64) int {
	if q <= exactLog {
		return int(max(q, 1)) + 1
	}
	return logSlots + 2
}

func (l *startLog) len() int { return l.n }

// get returns the entry i, 0 the oldest.
func (l *startLog) get(i int) *start {
	j := l.head + i
	if j >= len(l.ring) {
		j -= len(l.ring)
	}
	return &l.ring[j]
}

func (l *startLog) first() *start { return l.get(0) }
func (l *startLog) last() *start  { return l.get(l.n - 1) }

// push appends s after the latest entry, making room for a quota of q:
// the ring grows to q's capacity if it is smaller, and when it is full the
// two oldest entries merge into the later one (read later: safe).
func (l *startLog) push(s start, q int64) {
	if l.n == len(l.ring) {
		if c := min(logCap(q), maxLogLen); c > len(l.ring) {
			l.resize(c)
		} else {
			l.get(1).n += l.first().n
			l.pop()
		}
	}
	j := l.head + l.n
	if j >= len(l.ring) {
		j -= len(l.ring)
	}
	l.ring[j] = s
	l.n++
}

// resize moves the entries to a ring of capacity c, at least l.n.
func (l *startLog) resize(c int) {
	ring := make([]start, c)
	for i := range l.n {
		ring[i] = *l.get(i)
	}
	l.ring, l.head = ring, 0
}

// pop removes the oldest entry; its count must already be off total.
func (l *startLog) pop() {
	if l.head++; l.head == len(l.ring) {
		l.head = 0
	}
	l.n--
}

// add records n starts at now.
func (l *startLog) add(now, q, w, n int64) {
	if n <= 0 || w <= 0 {
		return
	}
	at := now
	if q > exactLog {
		g := max(1, (w+logSlots-1)/logSlots)
		at = (now/g + 1) * g
		if l.n == 1 && l.total+n <= q/looseFrac {
			// The count that cannot bind yet, still in the window: it
			// takes the starts, read at the latest (as below, without
			// the trimming and the cases that cannot apply).
			if e := &l.ring[l.head]; e.at+w > now {
				e.at, e.n = max(e.at, at), e.n+n
				l.total += n
				return
			}
		}
	}
	l.trim(now, w)
	switch {
	case l.n > 0 && l.last().at >= at:
		l.last().n += n // same instant or slot (or a clock gone back: later is safe)
	case l.n == 1 && q > exactLog && l.total+n <= q/looseFrac:
		// It cannot bind yet: one count, read at the latest start.
		l.last().at, l.last().n = at, l.last().n+n
	default:
		l.push(start{at: at, n: n}, q)
	}
	l.total += n
	if q <= exactLog {
		// Only the q latest starts matter.
		for l.n > 1 && l.total-l.first().n >= q {
			l.total -= l.first().n
			l.pop()
		}
		if extra := l.total - q; extra > 0 && l.first().n > extra {
			l.first().n -= extra
			l.total = q
		}
	}
}

// unlog takes back one start logged at or before at: one the origin did
// not see (its answer came from a cache). It is taken from the latest
// entry no later than at, which is at's own for a start logged one by
// one; kept by slot, at's entry is at its slot's end, and an earlier
// entry gives up a start instead: the log then reads the start at as
// made later than the one taken back, which is safe. With no entry that
// early, nothing is taken back. It reports whether a start was.
func (l *startLog) unlog(at int64) bool {
	for i := l.n - 1; i >= 0; i-- {
		e := l.get(i)
		if e.at > at {
			continue
		}
		e.n--
		l.total--
		if e.n > 0 {
			return true
		}
		// Drop the empty entry: the later ones move back one place.
		for j := i; j < l.n-1; j++ {
			*l.get(j) = *l.get(j + 1)
		}
		l.n--
		return true
	}
	return false
}

// tally adds one start at now, as add(now, q, w, 1) would, where the log
// is the one count of a large q that cannot bind yet, still in the window,
// and reports whether it did: inline, with no call. Otherwise it changes
// nothing.
func (l *startLog) tally(now, q, w int64) bool {
	if q <= exactLog || l.n != 1 || l.total >= q/looseFrac || w <= 0 {
		return false
	}
	e := &l.ring[l.head]
	if e.at+w <= now {
		return false
	}
	g := max(1, (w+logSlots-1)/logSlots)
	e.at, e.n = max(e.at, (now/g+1)*g), e.n+1
	l.total++
	return true
}

// clamp reads the starts logged after t as made at t, in one entry: the
// log stays in order, with no two entries at one instant.
func (l *startLog) clamp(t int64) {
	var n int64
	for l.n > 0 && l.last().at > t {
		n += l.last().n
		l.n--
	}
	switch {
	case n == 0:
	case l.n > 0 && l.last().at == t:
		l.last().n += n
	default:
		l.n++ // the slot of the last entry taken off
		*l.last() = start{at: t, n: n}
	}
}

// trim drops the starts that left the window by now.
func (l *startLog) trim(now, w int64) {
	for l.n > 0 && l.first().at+w <= now {
		l.total -= l.first().n
		l.pop()
	}
}

// wait returns how long a start at now must wait so that no more than q
// requests start in any span of w; 0 when it may go. This is also what
// defuses the ratio trap of draft-11 §8.5: r=10000;t=10 under
// q=10000;w=1000 never leads to a sustained 1000 requests a second, since
// the next 10000 can start only 1000 seconds after the first.
func (l *startLog) wait(now, q, w int64) int64 {
	if l.open(now, q, w) {
		return 0
	}
	l.trim(now, w) // each start that left the window is dropped once
	return l.next(now, q, w)
}

// next is wait without trimming the log: the starts that left the window
// are skipped, so that inspection changes nothing.
func (l *startLog) next(now, q, w int64) int64 {
	if l.open(now, q, w) {
		return 0
	}
	total, first := l.total, 0
	for first < l.n && l.get(first).at+w <= now {
		total -= l.get(first).n
		first++
	}
	if total < q {
		return 0
	}
	need := total - q + 1
	for i := first; i < l.n; i++ {
		s := l.get(i)
		if need -= s.n; need <= 0 {
			// A start counts at the end of its slot, after it was
			// made: a window from now is never too short.
			return min(s.at+w-now, w)
		}
	}
	return 0
}

// within returns the starts logged within the window of w before now,
// each read as made at its entry's instant (the end of its slot).
func (l *startLog) within(now, w int64) int64 {
	total := l.total
	for i := 0; i < l.n && l.get(i).at+w <= now; i++ {
		total -= l.get(i).n
	}
	return total
}

// open reports whether a start at now may go with nothing to trim: the
// log is one count, still in the window, short of q. wait returns 0 then;
// a caller checks this inline before calling it.
func (l *startLog) open(now, q, w int64) bool {
	return l.n == 1 && l.total < q && l.ring[l.head].at+w > now
}

// waitKept is wait for a log whose starts are kept longer than w: the
// starts older than w are kept, not counted. It trims nothing (trimming
// first, as the learned quota's wait does, changes nothing it returns),
// so that a View, which changes nothing, reads it too.
func (l *startLog) waitKept(now, q, w int64) int64 {
	total, i := l.total, 0
	for ; i < l.n && l.get(i).at+w <= now; i++ {
		total -= l.get(i).n
	}
	if total < q {
		return 0
	}
	need := total - q + 1
	for ; i < l.n; i++ {
		s := l.get(i)
		if need -= s.n; need <= 0 {
			// A start counts at the end of its slot, after it was
			// made: a window from now is never too short.
			return min(s.at+w-now, w)
		}
	}
	return 0
}

// redate counts one start made at from as made with the earliest start
// kept at or after to (to <= from), so that it leaves the window with it
// and not later. Nothing changes if no start at or after from is kept, or
// if from is before to: a start made before the window already left it (a
// request that took longer than the window). An entry left empty is
// removed (rare: a refusal; linear in the log).
func (l *startLog) redate(from, to int64) {
	if from < to {
		return
	}
	var dst *start
	for i := range l.n {
		e := l.get(i)
		if dst == nil && e.at >= to {
			dst = e
		}
		if e.at < from {
			continue
		}
		if dst != e {
			dst.n++
			if e.n--; e.n == 0 {
				for k := i; k < l.n-1; k++ {
					*l.get(k) = *l.get(k + 1)
				}
				l.n--
			}
		}
		return
	}
}

// reset forgets every start.
func (l *startLog) reset() {
	l.head, l.n, l.total = 0, 0, 0
}
