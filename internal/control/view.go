package control

import "time"

// View is what a State says of its key at an instant, for inspection.
type View struct {
	Custom        bool
	InFlight      int
	PauseUntil    time.Time // zero when not paused at the instant
	PauseReason   Reason
	Probing       bool
	Policies      []PolicyView
	Learned       *PolicyView
	DistrustUntil time.Time
	RetriesLeft   int
	// NextStart is the earliest a request may start by the q per w of
	// the key's quotas of requests, stated or learned from refusals; zero
	// when none holds one back at the instant.
	NextStart time.Time
	// RateNext is the next start Config.MaxRate allows, as the last grant
	// under a MaxRate set it; zero when past.
	RateNext time.Time
}

// PolicyView is one quota of a View.
type PolicyView struct {
	Name      string
	Partition []byte // the partition key, as the server sent it (its SHA-256 digest when longer than 128 bytes); "" when none
	Unit      string
	Quota     int64         // -1 when unknown
	Window    time.Duration // 0 when unknown
	Remaining int64         // -1 when no observation is live
	ResetAt   time.Time
	Learned   bool
	Reserved  int64     // a cost unit's: what the requests in flight reserve
	Refill    float64   // a cost unit's: units per second, when replenished continuously
	Stated    time.Time // a cost unit's: when an answer last stated it
	Accepted  int64     // a cost unit's: the largest cost the server accepted
	Scale     int64     // a cost unit's: the thousandths the server was seen to count beyond declared costs (see Need)
	Short     int64     // a cost unit's: what Reserved holds beyond the level, when Remaining is 0 for it (admission counts it)
}

// Need returns what c costs in unit as a key holds it whose unit was seen
// to count scale thousandths beyond declared costs (PolicyView.Scale): its
// cost declared, and that share and a quarter more of the part the scale
// applies to. It is at most the largest quota a key keeps.
func Need(unit string, scale int64, c Cost) int64 {
	u := costUnit{name: unit, scale: min(max(scale, 0), maxScale)}
	return u.need(&c)
}

// View returns what s says at now. It does not change s.
func (s *State) View(t time.Time) View {
	now := instant(t)
	v := View{
		Custom:        s.flags&flagCustom != 0,
		InFlight:      int(s.liveLeases(now)),
		Probing:       !s.ramp.open,
		DistrustUntil: at(s.learn.distrustUntil),
		RetriesLeft:   s.retry.left(now),
	}
	if now < s.pauseUntil {
		v.PauseUntil, v.PauseReason = at(s.pauseUntil), s.pauseReason
	}
	awaiting := s.liveAwaiting(now)
	for i := range s.policies {
		v.Policies = append(v.Policies, s.policies[i].view(now, v.InFlight, awaiting, false))
	}
	for i := range s.costs.quotas {
		v.Policies = append(v.Policies, s.costs.view(&s.costs.quotas[i], now))
	}
	if s.learn.quota != nil {
		lv := s.learn.quota.view(now, v.InFlight, awaiting, true)
		v.Learned = &lv
	}
	if s.rateNext > now {
		v.RateNext = at(s.rateNext)
	}
	if next := s.paceNext(now); next > 0 {
		v.NextStart = at(next)
	}
	return v
}

// paceNext returns the earliest a request may start after now by the q
// per w of the key's quotas of requests, stated or learned; 0 when none
// holds one back at now. It does not change s.
func (s *State) paceNext(now int64) int64 {
	return max(s.statedNext(now), s.learnedNext(now))
}

// statedNext is paceNext of the quotas stated; 0 when none holds a
// request back at now.
func (s *State) statedNext(now int64) int64 {
	next := int64(0)
	for i := range s.policies {
		if p := &s.policies[i]; p.paces() {
			if d := p.paceDelay(now, false); d > 0 {
				next = max(next, addSat(now, d))
			}
		}
	}
	return next
}

// learnedNext is paceNext of the quota learned; 0 when it holds no
// request back at now.
func (s *State) learnedNext(now int64) int64 {
	if s.learn.active(s.policies, now) {
		if d := s.learn.next(now); d > 0 {
			return addSat(now, d)
		}
	}
	return 0
}

// Stepped returns a copy of s as its next Acquire at t bounds it, and
// true, when the clock went back since its last (see acquireAt): the
// state a view at t must read, which s itself shows as the step left it
// (a next start of MaxRate a spacing and the step away, where a request
// waits one spacing). Otherwise it returns false, and s is read as it is.
// Only the copy allocates.
func (s *State) Stepped(t time.Time, cfg *Config) (State, bool) {
	now := instant(t)
	if now >= s.used-int64(clockBack) {
		return State{}, false
	}
	c, ok := s.clone()
	if ok {
		c.boundAt(now, cfg, true, 0)
	}
	return c, ok
}

// clone returns a copy of s that shares no memory with it; false never
// (s reads back as it was written).
func (s *State) clone() (State, bool) {
	var c State
	if b, err := s.MarshalBinary(); err != nil || c.UnmarshalBinary(b) != nil {
		return State{}, false
	}
	return c, true
}

// BoundView is View of s as Bound leaves it at t, with a pause until pu
// for why added as PauseUntil adds it (pu zero: none), without changing
// s: what the next Acquire through a Store finds (see Bound), for
// inspection.
func (s *State) BoundView(t time.Time, cfg *Config, pu time.Time, why Reason) View {
	c, ok := s.clone()
	if !ok {
		return s.View(t)
	}
	c.Bound(t, cfg)
	if !pu.IsZero() {
		c.PauseUntil(t, cfg, pu, why)
	}
	return c.View(t)
}

// liveLeases returns the requests in flight at now.
func (s *State) liveLeases(now int64) int64 {
	n := s.leases.n
	for _, b := range s.leases.b {
		if b.end <= now {
			n -= b.n
		}
	}
	return n
}

// liveAwaiting is liveLeases less the requests answered whose bodies
// still arrive: those an r counts (see acquire).
func (s *State) liveAwaiting(now int64) int64 {
	n := s.leases.awaiting()
	for _, b := range s.leases.b {
		if b.end <= now {
			n -= b.n - b.k
		}
	}
	return n
}

// view returns p at now, inflight requests in flight and awaiting of them
// not answered yet: r counts these alone (the server counted an answered
// one in the r it answered), content bytes every one.
func (p *policy) view(now int64, inflight int, awaiting int64, learned bool) PolicyView {
	v := PolicyView{Name: p.name, Unit: p.unit.String(), Quota: -1, Remaining: -1, Learned: learned}
	if p.pk != "" {
		v.Partition = []byte(p.pk)
	}
	if p.q > 0 {
		v.Quota, v.Window = p.q, time.Duration(p.w)
	}
	if r, ok := p.left(now, inflight, awaiting); ok {
		v.Remaining, v.ResetAt = r, at(p.deadline)
	}
	return v
}

// left returns what p's live observation leaves at now, counting the
// requests awaiting their answer (of requests) or in flight (of content
// bytes), as View shows it; false when p has none.
func (p *policy) left(now int64, inflight int, awaiting int64) (int64, bool) {
	if !p.live || p.deadline != 0 && now >= p.deadline {
		return 0, false
	}
	need, counted := int64(1), awaiting
	if p.unit == unitBytes {
		need, counted = p.need(), int64(inflight)
	}
	return max(0, p.minR-counted*need), true
}

// AcceptsAt returns when the state accepts a request again at the
// earliest, as View shows it at t, and why: the end of its pause, of the
// window of a spent quota of requests or content bytes, of the pacing of
// its quotas of requests, stated (ReasonPace) or learned
// (ReasonAdaptive), or, with rate, of Config.MaxRate's spacing; the zero
// time when nothing holds a request back at t. It does not change s, and
// allocates nothing.
func (s *State) AcceptsAt(t time.Time, rate bool) (time.Time, Reason) {
	now := instant(t)
	until, why, held := now, ReasonNone, false
	later := func(u int64, r Reason) {
		if u > until {
			until, why, held = u, r, true
		}
	}
	if now < s.pauseUntil {
		later(s.pauseUntil, s.pauseReason)
	}
	inflight, awaiting := int(s.liveLeases(now)), s.liveAwaiting(now)
	for i := range s.policies {
		if r, ok := s.policies[i].left(now, inflight, awaiting); ok && r == 0 {
			later(s.policies[i].deadline, ReasonQuota)
		}
	}
	later(s.statedNext(now), ReasonPace)
	later(s.learnedNext(now), ReasonAdaptive)
	if rate {
		later(s.rateNext, ReasonPace)
	}
	if !held {
		return time.Time{}, ReasonNone
	}
	return at(until), why
}
