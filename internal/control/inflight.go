package control

import "time"

// InFlight counts requests in flight outside a State, as a State counts
// its own (see leases): each until it ends or its lease does, whichever
// comes first, in a bounded number of slots by when its lease ends,
// however many there are. A Transport's local ceilings count with it, so
// that a request whose Base never returns holds their slot no longer than
// it holds the Budget's. The zero value is ready to use.
type InFlight struct {
	ls   leases
	base int64 // the instant slots are counted from: the first start
}

// Start counts one request started at now (an instant, see [Instant]),
// whose context ends at until (zero: no deadline), under leases of lease
// (0: DefaultLease), and returns when its lease ends, for End.
func (f *InFlight) Start(now int64, until time.Time, lease time.Duration) int64 {
	if f.base == 0 {
		f.base = now
	}
	cfg := Config{Lease: lease}
	return f.ls.add(f.base, leaseUntil(now, &cfg, &until), cfg.lease())
}

// End ends the request whose lease ends at end, unless its lease ended
// first; it reports whether it was counted.
func (f *InFlight) End(end int64) bool { return f.ls.remove(end, false) }

// Reap ends the leases that have ended by now, and reports whether any
// had.
func (f *InFlight) Reap(now int64) bool { return f.ls.reap(now) }

// N returns how many requests are counted in flight.
func (f *InFlight) N() int { return int(f.ls.n) }

// Next returns when the earliest lease counted ends; zero when none is.
func (f *InFlight) Next() int64 { return f.ls.first() }
