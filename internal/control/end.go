package control

import "time"

// A request is in flight until its response body ends, not only until its
// headers arrive: a server that streams an answer (server-sent events, a
// download) still serves it, and counts it against its concurrency. Its
// outcome is applied when the headers arrive, so that a spent quota or a
// refusal holds the other requests at once: Release with Outcome.Keep
// applies it and keeps the lease, and End ends the lease when the body
// ends. Its lease bounds it as any other's: a body never closed holds its
// slot until the lease expires.
//
// Such a request counts for the rules that bound what the server serves at
// once: concurrency policies, Config.MaxConcurrency, and content-bytes
// policies (its bytes are still being sent). It no longer counts for the
// rules that wait for answers: r minus the requests in flight (the server
// counted it in the r it answered, and every lower r reported since), and
// the probe and the ramp-up (its answer is in; a probe after a pause does
// not wait for streams begun before it).
//
// Everything the controller learns from an answer (observations, pauses,
// refusals, the learner's cycles and windows, the probe) is taken at the
// headers: that is when the server said what it had to say. A window
// measured to the end of a body would add the body's length to the
// server's window, and a concurrency limit learned as a rate would come
// out at half its worth.

// keeps reports whether Release of l with out keeps l in flight: out asks
// for it, and l is a lease of this state still counted.
func (s *State) keeps(l *Lease, out *Outcome) bool {
	return out.Keep && !out.Refused && !out.Failed && l.born == s.born && l.born != 0 && l.seq <= s.seq && s.leases.has(l.end)
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
	s.EndInstant(instant(t), cfg, l)
}

// EndInstant is End at the instant now, in nanoseconds since 1970 as
// [Instant] converts a time.
func (s *State) EndInstant(now int64, cfg *Config, l *Lease) {
	if l.born == 0 || l.born != s.born {
		return
	}
	before := s.roomBefore(cfg)
	reaped := s.reapLeases(now)
	if s.leases.remove(l.end, true) || reaped {
		s.gen++ // one fewer in flight: waiters look again
		s.freed(now, cfg, before)
	}
	s.settle(now, cfg)
}

// EndUnkept is End for a request whose Release with Outcome.Keep was not
// applied (a Store failed it): its lease is still counted as its grant
// left it, not kept, and ends now; were it the probe, whose answer the
// state never had, another request probes. Should the Release have been
// applied after all (a Store that failed after it committed), the lease
// kept is ended.
func (s *State) EndUnkept(t time.Time, cfg *Config, l *Lease) {
	if l.born == 0 || l.born != s.born {
		return
	}
	now := instant(t)
	before := s.roomBefore(cfg)
	reaped := s.reapLeases(now)
	// Its own, not kept, first: leases are counted by the instant they
	// end, and one kept of that instant may be another request's, whose
	// body still streams (freed here, it left this one counted).
	counted := s.leases.remove(l.end, false)
	ended := counted || s.leases.remove(l.end, true)
	// Its Release not applied, the state never saw its answer: a slow one
	// gives back a slot lent, as its Release would have. (Applied after
	// all, by a Store that failed after it committed, its answer gave one
	// back already, and this end, taking another request's lease of the
	// same instant, gives back one more: rare, and a stall lends it
	// again.)
	s.ramp.returned(l.seq, took(l, now), s.leases.awaiting(), counted)
	if ended || reaped {
		s.gen++ // one fewer in flight: waiters look again
		s.freed(now, cfg, before)
	}
	s.settle(now, cfg)
}
