package control

import "math"

type unit uint8

const (
	unitRequests unit = iota + 1
	unitBytes
	unitConcurrent
)

func (u unit) String() string {
	switch u {
	case unitRequests:
		return "requests"
	case unitBytes:
		return "content-bytes"
	case unitConcurrent:
		return "concurrent-requests"
	}
	return ""
}

const (
	maxQuota = int64(1) << 52 // q and r beyond this are read as this
	maxCost  = int64(1) << 31 // content bytes one request is expected to cost, at most
)

// policy is one quota of a key, identified by name, partition and unit.
type policy struct {
	name, pk string
	unit     unit
	seen     int64

	q int64 // quota per window; 0 when unknown
	w int64 // window; 0 when unknown

	// The live observation (RateLimit r and t, or a dialect's remaining
	// and reset). Responses to concurrent requests come back in any order,
	// so within one effective window the lowest r reported is the latest
	// state of the server; the requests still in flight may not be
	// counted in it yet, so they are subtracted from it.
	live     bool
	epoch    uint64  // the key's epoch of the request that reported it
	mark     uint64  // grants started before it was received
	minR     int64   // lowest r reported in this effective window
	deadline int64   // end of the effective window; zero when t was not given
	cost     float64 // content-bytes: bytes expected per request

	log startLog // starts within w (q-per-w pacing)

	// sliding reports a sliding-window counter, recognised from its
	// refusals (see recognise): paced smoothly, q-1 starts per w evenly
	// spread, and never paused until its stated reset.
	sliding bool
}

// paces reports whether the policy paces starts by q per w.
func (p *policy) paces() bool { return p.unit == unitRequests && p.q > 0 && p.w > 0 }

// pace returns the quota and window its start log keeps: q per w, or for
// a sliding-window counter one start per w/(q-1).
func (p *policy) pace() (q, w int64) {
	if p.sliding && p.q > 1 {
		return 1, max(p.w/(p.q-1), 1)
	}
	return p.q, p.w
}

// need returns the bytes one request is expected to cost a content-bytes
// policy.
func (p *policy) need() int64 { return min(max(1, int64(math.Ceil(p.cost))), maxCost) }

// startLog keeps the starts that pace a q-per-w quota: no more than q
// starts in any span of w. It keeps what pacing needs and no more: for a q
// of up to exactLog, the q latest starts one by one; for a larger q, counts
// of starts per slot of w/logSlots, each read as if it had started at the
// end of its slot, which never lets more than q start in a span of w and
// costs at most one slot of pace.
type startLog struct {
	s     []start // by at, ascending
	total int64   // sum of the counts
}

// start counts n starts that leave the window at at+w.
type start struct {
	at, n int64
}

const (
	exactLog  = 128
	logSlots  = 64
	maxLogLen = exactLog + logSlots + 2
)

// add records n starts at now.
func (l *startLog) add(now, q, w, n int64) {
	if n <= 0 || w <= 0 {
		return
	}
	at := now
	if q > exactLog {
		g := max(1, (w+logSlots-1)/logSlots)
		at = (now/g + 1) * g
	}
	l.trim(now, w)
	if k := len(l.s); k > 0 && l.s[k-1].at >= at {
		l.s[k-1].n += n // same instant or slot (or a clock gone back: later is safe)
	} else {
		l.s = append(l.s, start{at: at, n: n})
	}
	l.total += n
	if q <= exactLog {
		// Only the q latest starts matter.
		i := 0
		for i < len(l.s)-1 && l.total-l.s[i].n >= q {
			l.total -= l.s[i].n
			i++
		}
		l.drop(i)
		if extra := l.total - q; extra > 0 && l.s[0].n > extra {
			l.s[0].n -= extra
			l.total = q
		}
	}
	for len(l.s) > maxLogLen {
		l.s[1].n += l.s[0].n // read the oldest as later: safe
		l.drop(1)
	}
}

// drop removes the i oldest entries; their counts are already off total.
func (l *startLog) drop(i int) {
	if i > 0 {
		l.s = append(l.s[:0], l.s[i:]...)
	}
}

// trim drops the starts that left the window by now.
func (l *startLog) trim(now, w int64) {
	i := 0
	for i < len(l.s) && l.s[i].at+w <= now {
		l.total -= l.s[i].n
		i++
	}
	l.drop(i)
}

// wait returns how long a start at now must wait so that no more than q
// requests start in any span of w; 0 when it may go. This is also what
// defuses the ratio trap of draft-11 §8.5: r=10000;t=10 under
// q=10000;w=1000 never leads to a sustained 1000 requests a second, since
// the next 10000 can start only 1000 seconds after the first.
func (l *startLog) wait(now, q, w int64) int64 {
	l.trim(now, w)
	if l.total < q {
		return 0
	}
	need := l.total - q + 1
	for _, s := range l.s {
		if need -= s.n; need <= 0 {
			return s.at + w - now
		}
	}
	return 0
}

// reset forgets every start.
func (l *startLog) reset() {
	l.s, l.total = l.s[:0], 0
}
