package control

// shares tells, for a key that states nothing and has learned a quota, a
// server that refuses a share of requests whatever their pace (a load
// balancer shedding load, a backend's own overload) from one that limits
// their rate. Each bare refusal of a learned quota cuts it or measures it
// again (see learner.refused), and a refusal that comes whatever the pace
// comes again at the pace cut: the quota shrank at every refusal, and a
// server that refused one request in a hundred at random was served, an
// hour on, a hundredth of what a plain client was (DESIGN.md §6,
// "Refusals of no rate").
//
// What tells them apart is the pace. A limit refuses a pace above it, and
// none below it: once a refusal cuts the pace under the limit, the next
// comes only when the steps of growth have brought it back above. A share
// refused at random is refused at any pace. So the key notes the learned
// quota's spacing (w/q) at each refusal that came after sharesRun
// acceptances or more (a low share), and the fastest such (fast). A
// refusal after as many acceptances, at a learned quota sharesFall times
// slower than fast or more, is one no limit explains: a limit that let a
// low share be refused at fast is far above the pace now refused. (Under
// one limit, the learned pace at its refusals stays within the cut and
// the steps of growth of it: three quarters to once and a bit. A first
// measurement can overshoot it twice, a deep bucket drained at once.)
//
// Then the learned quota is forgotten, and the key's bare refusals are
// read as of no rate (none): they cost the key no pause, teach the learner
// nothing, and only the refused request waits, its own backoff, the
// refusal floor at least (see Decide). The verdict holds while the share
// stays low: sharesMost bare refusals within a block of sharesBlock
// answers revoke it, and that refusal is read as any, the learner
// measuring from it (a limit lowered, or one shared with clients that took
// more of it, refuses a pace it let through: read so, it costs those
// refusals once). A refusal that is not bare (a wait given, a quota
// stated), or a key that states quotas, ends the test and any verdict.
type shares struct {
	fast int64 // the spacing (w/q) of the fastest learned quota refused after sharesRun acceptances or more, since the test began; 0: none
	run  int32 // acceptances since the key's last refusal, up to sharesRun
	none bool  // the verdict: the key's bare refusals are of no rate
	ok   uint8 // while none: acceptances in the current block of sharesBlock answers
	no   uint8 // and bare refusals
}

const (
	sharesRun   = 8  // acceptances before a refusal that make it one of a low share
	sharesFall  = 4  // how many times slower than the fastest such a learned quota refused so must be
	sharesBlock = 64 // answers a verdict's share is counted over
	sharesMost  = 16 // bare refusals within a block that revoke the verdict: a quarter
)

// sharesAccepted counts an acceptance, for a key that states nothing and
// has learned a quota or holds a verdict: no other key needs the count,
// nor keeps it in its stored form.
func (s *State) sharesAccepted() {
	if s.flags&flagHinted == 0 && (s.learn.quota != nil || s.shares.none) {
		s.shares.accepted()
	}
}

// accepted counts an acceptance.
func (h *shares) accepted() {
	h.run = min(h.run+1, sharesRun)
	if h.none {
		h.ok++
		h.roll()
	}
}

// roll starts a new block once the current one is full.
func (h *shares) roll() {
	if int(h.ok)+int(h.no) >= sharesBlock {
		h.ok, h.no = 0, 0
	}
}

// sharesRefused reads a refusal before the learner does; bare when it
// gave no wait and stated no quota. It reports whether the refusal is of
// no rate: the learner must not read it, and the key not pause. At the
// refusal that gives the verdict, the learned quota is forgotten.
func (s *State) sharesRefused(bare bool) bool {
	h := &s.shares
	run := h.run
	h.run = 0
	if !bare || s.flags&flagHinted != 0 {
		*h = shares{}
		return false
	}
	if h.none {
		if h.no++; h.no >= sharesMost {
			*h = shares{} // the share grew: read from this refusal on as any
			return false
		}
		h.roll()
		return true
	}
	lr := &s.learn
	if lr.quota == nil || lr.pending || run < sharesRun {
		return false
	}
	gap := max(lr.quota.w/max(lr.quota.q, 1), 1)
	switch {
	case h.fast == 0 || gap < h.fast:
		h.fast = gap
	case gap/sharesFall >= h.fast:
		*h = shares{none: true}
		// The learned quota is forgotten; the cycle count stays, so
		// that an answer of an earlier cycle is no acceptance of a
		// later one's (as Forget keeps it).
		s.learn = learner{cycle: lr.cycle}
		s.shed = shed{}
		return true
	}
	return false
}
