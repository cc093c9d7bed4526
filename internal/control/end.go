package control

import "time"

// A request is in flight until its response body ends, not only until its
// headers arrive: a server that streams an answer (server-sent events, a
// download) still serves it, and counts it against its concurrency. Its
// outcome is applied when the headers arrive, so that a spent quota or a
// refusal holds the other requests at once: Release with Outcome.Keep
// applies it and keeps the lease, and End ends the lease when the body
// ends. Until then the request counts for every rule that counts requests
// in flight: concurrency policies, r minus the requests in flight,
// Config.MaxConcurrency, and the ramp-up. Its lease bounds it as any
// other's: a body never closed holds its slot until the lease expires.
//
// Everything the controller learns from an answer (observations, pauses,
// refusals, the learner's cycles and windows, the probe) is taken at the
// headers: that is when the server said what it had to say, and a
// window measured to the end of a body would count the body's length as
// part of the server's window.

// keeps reports whether Release of l with out keeps l in flight: out asks
// for it, and l is a lease of this state still counted.
func (s *State) keeps(l *Lease, out *Outcome) bool {
	return out.Keep && !out.Refused && !out.Failed && l.born == s.born && l.born != 0 && s.leases.has(l.end)
}

// End ends the request l granted, at now, after Release applied its
// outcome with Outcome.Keep: it stops counting in flight. It must be
// called once per such lease. A lease of another incarnation of the state
// (the key was forgotten meanwhile), or one already expired, frees
// nothing.
func (s *State) End(t time.Time, cfg *Config, l *Lease) {
	if l.born == 0 || l.born != s.born {
		return
	}
	now := instant(t)
	reaped := s.leases.reap(now)
	if s.leases.remove(l.end) || reaped {
		s.gen++ // one fewer in flight: waiters look again
	}
	s.settle(now, cfg)
}
