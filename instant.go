package polite

import (
	"sync/atomic"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// clock reads the current instant for a request's path at about half the
// cost of time.Now: from a base instant, read with time.Now, plus the
// monotonic time elapsed since, which alone is cheap to read. The wall
// clock part of what it returns follows the base, not the system's wall
// clock: should the system clock be stepped, the two differ by the step
// until the base is read again, at most clockRefresh later. Only the
// comparison with a server's Date reads the wall part, to a second's grain.
//
// Inside a testing/synctest bubble time.Now has no monotonic reading, so
// time.Since falls back to the bubble's own clock, and a base read outside
// the bubble is out of range there and read again: the clock is the
// bubble's. The zero value is ready to use.
type clock struct {
	base atomic.Pointer[clockBase]
}

// clockBase is a base instant, with its Unix nanoseconds.
type clockBase struct {
	t    time.Time
	unix int64 // t.UnixNano()
	// exact reports that unix plus an elapsed time below maxElapsed is
	// the Unix nanoseconds of t plus it, within the instants the
	// controller keeps: t is neither before 1970 nor near their end.
	exact bool
}

// clockRefresh is how long one base instant is used.
const clockRefresh = time.Second

// maxElapsed bounds the time counted from one base instant that a reading
// adds to its Unix nanoseconds; longer, it converts its time.Time.
const maxElapsed = time.Duration(1) << 61

func newClockBase(t time.Time) *clockBase {
	const last = int64(1)<<62/int64(time.Second) - int64(maxElapsed/time.Second) - 2
	sec := t.Unix()
	return &clockBase{t: t, unix: t.UnixNano(), exact: sec >= 0 && sec < last}
}

// reading is one reading of a clock: its base instant plus d, kept apart so
// that the reading's instant costs an addition, and its time.Time is made
// only where it is needed.
type reading struct {
	b *clockBase
	d time.Duration
}

// read returns the current instant, with a monotonic clock reading (outside
// synctest bubbles).
func (c *clock) read() reading {
	if b := c.base.Load(); b != nil {
		if d := time.Since(b.t); d >= 0 && d < clockRefresh {
			return reading{b, d}
		}
	}
	b := newClockBase(time.Now())
	c.base.Store(b)
	return reading{b: b}
}

// now returns the current instant, as read does, as a time.Time.
func (c *clock) now() time.Time { return c.read().time() }

// time returns the instant r read.
func (r reading) time() time.Time { return r.b.t.Add(r.d) }

// exact reports whether the Unix nanoseconds of r are those of its base
// plus d.
func (r reading) exact() bool { return r.b.exact && r.d >= 0 && r.d < maxElapsed }

// instant returns r on the controller's clock: control.Instant(r.time()).
func (r reading) instant() int64 {
	if r.exact() {
		return control.InstantOf(r.b.unix + int64(r.d))
	}
	return control.Instant(r.time())
}

// unixInstant returns r.time().UnixNano() and r.instant(), the second
// from the first when r is exact.
func (r reading) unixInstant() (unix, inst int64) {
	if r.exact() {
		unix = r.b.unix + int64(r.d)
		return unix, control.InstantOf(unix)
	}
	t := r.time()
	return t.UnixNano(), control.Instant(t)
}
