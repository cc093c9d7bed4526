package polite

import (
	"sync/atomic"
	"time"
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
	base atomic.Pointer[time.Time]
}

// clockRefresh is how long one base instant is used.
const clockRefresh = time.Second

// now returns the current instant, with a monotonic clock reading (outside
// synctest bubbles).
func (c *clock) now() time.Time {
	if b := c.base.Load(); b != nil {
		if d := time.Since(*b); d >= 0 && d < clockRefresh {
			return b.Add(d)
		}
	}
	n := time.Now()
	c.base.Store(&n)
	return n
}
