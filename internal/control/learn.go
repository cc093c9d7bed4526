package control

import (
	"math"
	"math/bits"
	"time"
)

// learner keeps one invariant: what refusals revealed of a key's limits
// paces it, never shortening a wait the server gave. It infers them from
// what the server accepts and refuses, for servers that say little or
// nothing about their limits, or say more than they grant (a hint is not a
// grant):
//
//   - A refusal the headers did not foresee (no quota in it is spent) starts
//     a measurement: the requests the server accepted since the last pause
//     are its quota, and the time from the first of them until the key is
//     accepted again is its window (a first measurement counts from the
//     latest lull at least as long as that window, if any: see lull).
//     A fixed window reveals q and w this way; a token bucket or a leaky
//     bucket reveals its burst. The window is measured from above (the
//     acceptance that ends it comes at the pace of the probes, after the
//     window ended); a probe refused while measuring bounds it from below.
//   - The learned quota paces the key like a stated one (no more than q
//     starts in any span of w), on top of whatever the headers say. Each
//     learned window begins with a lone probe, so that a window begun too
//     early costs one refusal, not a burst of them; at the even pace
//     once it held (not on trial), which begins no window with a burst,
//     only while the key answers within the pace's spacing (see
//     probeStalls).
//   - It grows additively while it holds requests back without a refusal,
//     every two learned windows at least (one for its first step after the
//     first measurement: see first), by one of two steps in turn: the
//     burst (q grows by one, w stays) or the rate (w shrinks, q stays; by
//     a quarter of w, then twice as much after each step that held, but
//     only half way to the shortest window refused on trial). A fixed
//     window or a sliding log takes bursts; a leaky bucket or a token
//     bucket that refills faster than first measured takes rate, so that
//     they are approached from below. A step holds once a whole window
//     begun after it was accepted; a rate step, once the server's burst
//     (the most a measurement counted) would also be spent at the faster
//     rate, had the server only refilled at the rate that held (see
//     learner.drain), so that a bucket's slack does not pass for a rate.
//   - A measurement that a refused probe bounded from below is tested
//     first: one learned window after it, not two (nor four after a
//     decrease), the first step is a rate step of a quarter of w, but no
//     more than half way to the start of that probe (the window may be
//     shorter than measured by that much at most), on trial as any rate
//     step.
//   - A step taken at a refusal, when the server had nothing left, is on
//     trial for one learned window only: from there a faster rate than
//     the server's is refused in its first window (see stepSaturated).
//     The step a measurement bounded from below leaves untested is so
//     taken at the refusal of the learned quota's first burst, with the
//     even pace, not a learned window later.
//   - A refusal of a step on trial reverts it at once, and does not pause
//     the key: the quota that held paces it, and only the refused request
//     waits the refusal floor (see State.Release). The refused request
//     counts against the window it overdrew, not the next one (see
//     startLog.redate). A burst step refused, or a rate step with an
//     eighth of w or less left to try, is pinned until 32 learned windows
//     have passed since the last step was pinned, and for a quota of one
//     request 128 windows up to 30 s (see pinSpan; the pins lapse
//     together: a step refused lately says the server's limit is near),
//     while the other step grows; so is a rate step whose
//     next step, half way, would add less than a request a window (for a
//     quota of one request, whose every step does, one with a quarter of
//     w or less left), and,
//     once the quota was decreased, the rate step with a burst step
//     refused (it would try the same rate). A step refused with a wait
//     the server gave is reverted too; the key pauses, and the next step
//     is counted from the end of the pause. A rate step refused at the
//     even pace restores the rate that held a request a window slower
//     (see margin): that rate may be the server's limit exactly.
//   - A burst step refused on trial shows q is the server's burst: the
//     rate step is taken at that refusal, and from then on, in bursts, each
//     rate step is tried for one learned window and adds a request a
//     window at most (see burstKnown). A learned burst's lone probe
//     refused, with nothing accepted in its cycle, shows a window the last
//     burst spent (a fixed window the bursts drifted into): every rate step
//     since the measurement is undone (see unstep); with none to undo,
//     the learned window is lengthened by the refusal floor (see
//     lengthen). A quota of one request is not so read: every window of it
//     is a lone probe.
//   - A refusal of a learned quota that was not on trial first paces it
//     evenly, one start per w/q from the refusal, on trial for a learned
//     window, its starts waiting a while for the burst in flight to
//     drain to the pace's own level and one more (see drains), without a
//     pause (see refused), unless its lone probe was refused with nothing
//     accepted (see loneRefused); refused again at
//     the even pace, it backs off multiplicatively: a new measurement,
//     which halves q, lowers w by 30% and doubles it at most at a time
//     (a measurement that spans an outage must not make it the window; a cycle
//     measured out of phase with the server's window must not cut the
//     pace to nothing), and doubles the windows between steps, up to 4.
//     A second decrease in a row, with no step of growth between, that
//     counts no more than the one before is not out of phase: q becomes
//     what it counted (a token bucket refused after its refill each cycle
//     would otherwise be halved towards it one refusal at a time).
//   - Once the learned quota is a rate (a whole learned window held at the
//     even pace, or a rate step held since it was measured), a refusal off
//     trial cuts it to three quarters, without a pause or a measurement
//     (see cutRate); only refusals with nothing accepted between them
//     measure again. At the even pace it grows every learned window it
//     holds, by rate steps tried for one window each; the pace runs from
//     each refusal (see repace). Once decreased (a cut, or a measurement
//     of a learned quota), a rate step adds at most a request a window.
//   - A refusal while the headers said quota was left marks them
//     unreliable: the learned quota applies for a minute, doubling each time
//     they are caught again, up to an hour. Without such a mark, a learned
//     quota applies only while the key states no quota of its own.
type learner struct {
	// A cycle is a burst of starts: it begins after a pause, or once the
	// learned quota has held requests back a learned window after the
	// cycle began.
	cycle      uint64 // cycles so far
	cycleEpoch uint64 // the key's epoch the cycle began in
	cycleStart int64  // its first start
	cycleOK    int64  // its requests answered without refusal
	prevOK     int64  // the cycle before's, answered since it ended too (while a quota is learned)
	held       bool   // the learned quota held a request back since the cycle began

	pending   bool   // a measurement waits for the next acceptance
	pendCycle uint64 // the cycle refused
	pendQ     int64
	pendFrom  int64

	quota   *policy // learned; nil until a measurement ends
	binding bool    // the learned quota held a request back since it last grew
	grownAt int64
	growGap int32 // learned windows between growths: doubles with each refusal of a learned quota

	distrustUntil int64
	distrustFor   int64

	trial    uint8  // the step on trial (stepBurst, stepRate); 0: none
	trialAt  uint64 // the cycle the step was taken in
	prev     int64  // what the step on trial changed: q or w before it
	pinned   uint8  // steps refused on trial, bits of stepBurst and stepRate
	pinnedAt int64  // when the last one was pinned
	last     uint8  // the step taken last
	stride   int32  // the rate step is w>>stride; it halves (down to 1) after each rate step that held
	floor    int64  // the shortest w refused on trial, or the lower bound of a measurement (lo): the rate step stops half way to it; 0: none

	revertSeq uint64 // the key's grants when the last step was reverted; 0: not reverted
	burst     int64  // the most requests a measurement counted: the server's burst, as far as seen
	smooth    uint8  // smoothTrial, smoothOn: the learned quota is paced one start per w/q (see refused)
	smoothAt  uint64 // the cycle smooth pacing was tried from
	cut       int64  // the requests the last multiplicative decrease counted, if no step of growth was taken since; 0: none
	// lastStart is the learned quota's latest start, at its instant: its
	// log reads a quota above exactLog's starts at their slot's end, too
	// late for the even pace. 0: none.
	lastStart int64

	lo    int64 // while measuring: the latest start of a request refused in it, since pendFrom; 0: none (cleared when the measurement ends)
	quick bool  // a probe refused bounded the window measured from below (floor): the next step is a rate step, after one learned window

	cutSeq uint64 // the key's grants when the even pace was last cut (see cutRate); 0: none since the last measurement
	cutOK  bool   // a request granted after that cut was accepted
	rated  bool   // a rate step held since the last measurement: the quota is a rate the server passed

	measured int64 // the window the last measurement ended with, before any rate step; 0: none
	capped   int64 // the window the last measurement measured, when it was more than the doubling taken (see accepted), up to MaxPause; 0: none, or a step taken since

	// Until the first measurement: the starts of the cycle that came
	// after a lull, frozen while it measures (see lull).
	lulls  [maxLulls]lull
	nLulls uint8
	// idle is how long the key went without an Acquire before the one
	// now granting: set by each Acquire from the State's last use, never
	// kept.
	idle int64
}

// lull is a start that came a refusal floor or more after the key was
// last asked for a request (so after its last start), in a key's cycle
// before its first measurement. A first measurement counts from the
// latest lull at least as long as the window it then measures, rather
// than from the cycle's first start: no fixed window, sliding log or bucket that
// the server then kept can have counted the starts before that lull (a
// window shorter than the lull began after them, a bucket refilled in
// it). So a caller that sent a request every few seconds for minutes,
// then many at once, is measured as a key that began with them, not as
// one whose quota is a few requests a minute.
type lull struct {
	at  int64 // the start
	gap int64 // since the key was last asked for a request, up to MaxPause
	ok  int64 // acceptances of requests of the cycle started at or after it
}

// maxLulls is how many lulls a key keeps: the latest, and before it
// only longer ones, each twice the next at least (see addLull).
const maxLulls = 4

// The states of smooth pacing.
const (
	smoothTrial uint8 = 1 + iota // a burst was refused: pacing evenly at the same rate, on trial
	smoothOn                     // a whole learned window held at an even pace
	smoothNo                     // refused on trial: the rate was too high; bursts again
	smoothMax   = smoothNo
)

// The steps of growth.
const (
	stepBurst uint8 = 1 << iota // q grows by one
	stepRate                    // w shrinks
	stepsAll  = stepBurst | stepRate
)

const (
	distrustMin = int64(time.Minute)
	distrustMax = int64(time.Hour)
	minGrowGap  = 2                // learned windows between growths, at least
	maxGrowGap  = 4                // and at most
	pinWindows  = 32               // learned windows a refused step stays pinned, at least
	pinOne      = 128              // and for a quota of one request, at least,
	pinTime     = 30 * time.Second // up to this long (see pinSpan)
	rateStride  = 2                // the first rate step: w/4
)

func (l *learner) isZero() bool {
	return l.cycle == 0 && l.cycleEpoch == 0 && l.cycleStart == 0 && l.cycleOK == 0 && l.prevOK == 0 && !l.held &&
		!l.pending && l.pendCycle == 0 && l.pendQ == 0 && l.pendFrom == 0 && l.quota == nil &&
		!l.binding && l.grownAt == 0 && l.growGap == 0 && l.distrustUntil == 0 && l.distrustFor == 0 &&
		l.trial == 0 && l.trialAt == 0 && l.prev == 0 && l.pinned == 0 && l.pinnedAt == 0 && l.last == 0 && l.stride == 0 && l.floor == 0 &&
		l.revertSeq == 0 && l.burst == 0 && l.smooth == 0 && l.smoothAt == 0 && l.cut == 0 && l.lo == 0 && !l.quick &&
		l.cutSeq == 0 && !l.cutOK && !l.rated && l.measured == 0 && l.lastStart == 0 && l.capped == 0 && l.nLulls == 0
}

// even reports whether the learned quota is a rate: paced one start per
// w/q, a whole learned window having held so (see refused).
func (l *learner) even() bool { return l.smooth == smoothOn }

// probeStalls reports whether a learned window begun at the even pace
// goes without its lone probe: the key's round trip, rtt, is longer than
// the pace's spacing (w/q).
func (l *learner) probeStalls(rtt int64) bool {
	q := l.quota
	return l.even() && q != nil && rtt > q.w/max(q.q, 1)
}

// drains reports whether a start at now of the even pace on trial, the
// key answering in rtt, waits for fewer of the requests awaiting their
// answers than awaiting: the pace, one start every w/q answered in rtt,
// leaves rtt*q/w of them (a round trip longer than w counts as w: q), and
// one more. The burst whose refusal began the trial may still be in
// flight: a start sent beside it was refused by a limit in flight, and
// the trial failed for a rate it never tried. Requests whose bodies still
// arrive await nothing, and the drain lasts slow at most from grownAt:
// the refusal that began the trial, or a step of growth taken, undone or
// put back on it since, none of them at a start. Answers that do not
// come (a request that hangs) hold the trial no longer than they hold the
// ramp (see ramp.slowAfter). Counted from each start instead, they held a
// caller that sends one request at a time to a start every slow until its
// trial ended, and the trial's every start waited for its level, which
// cost a limit of two in flight answering in 20 ms (see DESIGN.md §6). A
// grownAt ahead of now (a clock stepped back, a state another process
// wrote) drains nothing: the bound would not hold.
func (l *learner) drains(now, awaiting, rtt, slow int64) bool {
	q := l.quota
	return l.smooth == smoothTrial && q != nil && rtt > 0 && l.grownAt != 0 && l.grownAt <= now && now-l.grownAt < slow &&
		awaiting > mulDiv(min(rtt, q.w), q.q, q.w)+1
}

// active reports whether the learned quota paces requests now: while the
// key states no quota of its own. A quota not stated again for its window,
// or a minute when longer, no longer counts: a server that stopped
// stating its quotas (another version, a proxy in front) is learned as one
// that never did.
func (l *learner) active(policies []policy, now int64) bool {
	if l.quota == nil {
		return false
	}
	if now < l.distrustUntil {
		return true
	}
	return !statesFresh(policies, now)
}

// statesFresh reports whether a quota of policies that paces requests,
// live or with its window, was stated within its window, or a minute when
// longer: whether the key's server states its quotas now. An observation
// past its effective window is not live, as Acquire marks it (a View,
// which changes nothing, reads it before that).
func statesFresh(policies []policy, now int64) bool { return stated(policies, now, true) }

// statedLately reports whether the server stated a quota of policies that
// paces requests within its window, or a minute when longer, spent or not,
// with its window or not (a legacy limit): whether the key's server states
// its quotas, for reading a 503 (see State.release).
func statedLately(policies []policy, now int64) bool { return stated(policies, now, false) }

// stated is statesFresh when paces, statedLately otherwise.
func stated(policies []policy, now int64, paces bool) bool {
	for i := range policies {
		p := &policies[i]
		live := p.live && (p.deadline == 0 || now < p.deadline)
		if p.unit != unitConcurrent && (!paces || live || (p.q > 0 && p.w > 0)) && now-p.seen < max(p.w, statedFresh) {
			return true
		}
	}
	return false
}

// renews reports whether a start at now begins a new cycle of the learned
// quota: it held requests back, and a learned window has passed since the
// cycle began.
func (l *learner) renews(now int64) bool {
	return l.held && l.quota != nil && now-l.cycleStart >= l.quota.w
}

// started records a granted request and returns its cycle.
func (l *learner) started(epoch uint64, now int64) uint64 {
	fresh := l.cycleEpoch != epoch || l.cycleStart == 0 || l.renews(now)
	if fresh {
		if l.smooth == smoothTrial && l.cycle > l.smoothAt && l.cycleEpoch == epoch && l.renews(now) {
			// A whole learned window begun after the switch held the
			// key back at the even pace and ends with no refusal of
			// it: the pace is kept, though the window used fewer than
			// q starts (a start the pace or the caller left unused).
			l.smooth = smoothOn
		}
		l.prevOK = 0
		if l.quota != nil && l.cycleEpoch == epoch {
			l.prevOK = l.cycleOK // its last answers may come after this start
		}
		l.cycle++
		l.cycleEpoch, l.cycleStart, l.cycleOK, l.held = epoch, now, 0, false
	}
	if q := l.quota; q != nil {
		q.log.add(now, q.q, l.keep(), 1)
		l.lastStart = now
	} else if !l.pending {
		l.noteStart(now, fresh)
	}
	return l.cycle
}

// noteStart records a start at now of a key that has learned and
// measures nothing, fresh when it begins a cycle: a lull when the key was
// idle for a refusal floor or more before it.
func (l *learner) noteStart(now int64, fresh bool) {
	if fresh {
		l.nLulls = 0
	} else if l.idle >= int64(RefusalFloor) {
		l.addLull(now, l.idle)
	}
}

// addLull records a start at now, gap after the key was last asked for a
// request: the lulls not twice as long are dropped, being older and too
// short to be worth keeping, and when all are kept, so is the oldest.
// Each kept is twice the next at least, and before it. It is kept out of
// line, so that noteStart, on every start of a key that states nothing,
// is inlined.
//
//go:noinline
func (l *learner) addLull(now, gap int64) {
	if now <= l.cycleStart {
		return // the clock went back past the cycle's start
	}
	n := int(l.nLulls)
	for n > 0 && (l.lulls[n-1].gap < 2*gap || l.lulls[n-1].at >= now) {
		n-- // shorter, or later: the clock went back
	}
	if n == maxLulls {
		copy(l.lulls[:], l.lulls[1:])
		n--
	}
	l.lulls[n] = lull{at: now, gap: min(gap, int64(MaxPause))}
	l.nLulls = uint8(n + 1)
}

// countLulls counts an acceptance of a request of the cycle started at
// start in each lull it started at or after.
func (l *learner) countLulls(start int64) {
	for i := range l.lulls[:l.nLulls] {
		if u := &l.lulls[i]; start >= u.at {
			u.ok = min(u.ok+1, maxQuota)
		}
	}
}

// fromLull moves a first measurement that ends at now to the latest lull
// at least as long as the window it then measures, with an acceptance
// since (see lull), and returns lo, a refused start's offset, moved with it.
func (l *learner) fromLull(now, lo int64) int64 {
	for i := int(l.nLulls) - 1; i >= 0; i-- {
		if u := l.lulls[i]; u.at > l.pendFrom && u.ok > 0 && u.gap >= now-u.at {
			if lo > 0 {
				lo = max(l.pendFrom+lo-u.at, 0)
			}
			l.pendFrom, l.pendQ = u.at, u.ok
			break
		}
	}
	l.nLulls = 0
	return lo
}

// relog starts the learned quota's log again with n starts at now, the
// latest of them.
func (l *learner) relog(now, n int64) {
	q := l.quota
	q.log.reset()
	q.log.add(now, q.q, q.w, n)
	l.lastStart = now
}

// keep returns how long the learned quota's starts are kept: its window,
// or while a rate step is on trial the window before it, so that the
// step, if refused, is undone with the starts it must count.
func (l *learner) keep() int64 {
	if l.trial == stepRate {
		return max(l.quota.w, l.prev)
	}
	return l.quota.w
}

// wait returns how long a start at now must wait for the learned quota.
func (l *learner) wait(now int64) int64 {
	q := l.quota
	q.log.trim(now, max(l.keep(), q.w))
	return l.next(now)
}

// next is wait without trimming the learned quota's log: for a View,
// which changes nothing.
func (l *learner) next(now int64) int64 {
	q := l.quota
	d := q.log.waitKept(now, q.q, q.w)
	if (l.smooth == smoothTrial || l.smooth == smoothOn) && q.log.len() > 0 {
		// One start every w/q after the latest. Read at its slot's end
		// (a quota above exactLog), every start waited for its slot to
		// end: 64 a window, whatever q (see TestEvenPaceLargeQuota).
		last := q.log.last().at
		if l.lastStart != 0 {
			last = min(last, l.lastStart)
		}
		d = max(d, last+q.w/max(q.q, 1)-now)
	}
	return d
}

// accepted records a response that was not a refusal; inflight is the
// number still in flight.
func (l *learner) accepted(g *Lease, inflight, now int64) {
	switch {
	case g.cycle == l.cycle && g.cycle != 0:
		l.cycleOK++
	case g.cycle+1 == l.cycle && g.cycle != 0 && l.quota != nil:
		l.prevOK++ // answered once the next cycle began
	}
	if l.nLulls > 0 && g.cycle != 0 && g.cycle == l.cycle && !l.pending {
		l.countLulls(g.start)
	}
	if l.cutSeq != 0 && g.seq > l.cutSeq {
		l.cutOK = true
	}
	if l.smooth == smoothTrial && l.cycle > l.smoothAt && l.cycleOK >= l.quota.q {
		l.smooth = smoothOn // a whole learned window held at an even pace
	}
	if !l.pending {
		l.grow(now)
		return
	}
	if g.cycle <= l.pendCycle {
		if g.cycle == l.pendCycle && g.cycle != 0 {
			l.pendQ++ // accepted in the refused cycle, answered late
			if l.nLulls > 0 {
				l.countLulls(g.start)
			}
		}
		return
	}
	// The key is accepted again: the measurement ends.
	l.pending, l.cutSeq, l.cutOK, l.rated = false, 0, false, false
	lo := l.lo
	l.lo = 0
	if l.nLulls > 0 {
		lo = l.fromLull(now, lo)
	}
	if l.pendQ < 1 {
		if q := l.quota; q != nil {
			// Nothing counted: q and w stay, but the window the
			// starts logged were held back by has ended, refused
			// starts with it (see lengthen).
			l.relog(now, min(inflight+1, q.q))
		}
		return
	}
	w := now - l.pendFrom
	if w <= 0 {
		return
	}
	if g.late && lo > 0 && g.start-l.pendFrom > lo+max(lo/2, 2*int64(RefusalFloor)) {
		// The acceptance of a probe that waited longer than the next
		// probe would have gone (half the time refused so far after
		// the last refused, or the floor spread), its attempts spread
		// over what it may wait (see stretch): it bounds the window
		// from above only, and the probe it stands for is that next
		// one. Not an acceptance after none was sent for a while, an
		// honest lull: its window is taken whole, as before (the
		// next probe's, 3 s against 60, refused 10 of 30 after it).
		w = min(w, lo+max(lo/2, int64(RefusalFloor)))
	}
	n, q := l.pendQ, l.quota
	l.burst = min(max(l.burst, n), maxQuota)
	if q == nil {
		q = &policy{unit: unitRequests}
		l.quota, l.stride = q, rateStride
	} else {
		// A learned quota refused: decrease multiplicatively, no
		// further than the measurement says. A cycle measured out of
		// phase with the server's window can count a handful of
		// acceptances, or a short window; one such measurement must
		// not cut the pace to nothing.
		// Two in a row that count no more than the last are not out
		// of phase: the second is trusted in full.
		counted := n
		if l.cut > 0 && n <= l.cut {
			n = max(min(n, q.q), 1)
		} else {
			n = max(min(n, q.q), q.q/2, 1)
		}
		l.cut = min(counted, maxQuota)
		// The window is lowered by 30% at most, and doubled at most: a
		// measurement that spans an outage, minutes in which the
		// server refused everything, must not make those minutes the
		// window (a key learned at 10 per 1.36 s measured 9 per 5
		// minutes across one, and never grew back). Should the next
		// measurement, with no step of growth between, go beyond the
		// doubling too, the window is truly longer, and taken whole (a
		// lone probe refused is no such sign: an outage may end
		// unevenly, a rolling restart refusing now and then).
		again := l.capped != 0
		l.capped = 0
		if most := 2 * q.w; w > most && !again {
			l.capped, w = min(w, int64(MaxPause)), most
		}
		w = max(w, q.w*7/10)
		l.floor = 0
	}
	q.q, q.w = min(n, maxQuota), min(w, int64(MaxPause))
	l.measured = q.w
	l.trial = 0
	// A probe refused while measuring bounds the window from below: it
	// lies between that probe's start and the acceptance that ended the
	// measurement. The first step tests the lower half of that span.
	l.quick = lo > 0 && lo < q.w
	if l.quick {
		l.floor = lo
	}
	l.relog(now, min(inflight+1, q.q))
	l.grownAt, l.binding = now, false
}

// grow takes a step of growth, at an acceptance at now, when the learned
// quota has held requests back for long enough without a refusal: a step
// on trial holds once a whole cycle begun after it was accepted; otherwise
// after growGap learned windows (two at least), or one for the first step
// after the first measurement (see first), or when a probe refused while
// measuring left the window measured untested from below (quick): that
// step is a rate step of a quarter of w, no more than half way to the
// probe's start (see rateStep).
func (l *learner) grow(now int64) {
	q := l.quota
	if q == nil || !l.binding {
		return
	}
	if l.trial != 0 {
		// A whole cycle begun after the step was accepted: the current
		// one, or the one before, whose last answers may come once the
		// next began (its paced starts and a round trip outlast w).
		if !(l.cycle > l.trialAt && l.cycleOK >= q.q) && !(l.cycle-1 > l.trialAt && l.prevOK >= q.q) {
			return
		}
		if l.trial == stepRate && l.revertSeq == 0 && !l.even() && !l.burstKnown() && now-l.grownAt < l.drain() {
			return
		}
		if l.trial == stepRate && l.revertSeq != 0 && l.cycleStart-l.grownAt > q.w {
			// The step taken at a refusal is tested only by a window
			// that follows the refusal, the server still spent: after
			// an idle spell it has refilled, and one window proves
			// nothing. The step is put back, and taken a learned
			// window on, on trial as any rate step (see resume).
			q.w, l.trial, l.quick = min(max(l.prev, 1), int64(MaxPause)), 0, true
			l.grownAt, l.binding = now, false
			return
		}
	} else {
		gap := int64(max(minGrowGap, l.growGap))
		if l.quick || l.even() || l.first() {
			// A measurement's own bound is tested, not a growth; a
			// rate grows every window; the first step is one window
			// from the first measurement (see first).
			gap = 1
		}
		if now-l.grownAt < gap*q.w {
			return
		}
	}
	if l.trial == stepRate {
		l.rated = true
		l.stride = max(l.stride-1, 1) // it held: the next rate step is twice as long, half of w at most
	}
	l.trial = 0
	if l.pinned != 0 && now-l.pinnedAt >= l.pinSpan() {
		l.pinned = 0 // the server may have changed
	}
	step := stepBurst
	if l.last == stepBurst || l.quick || l.even() {
		step = stepRate
	}
	quick := l.quick
	l.quick = false
	if l.pinned&step != 0 && l.even() {
		return // a rate pinned: a burst step would grow it too
	}
	if l.pinned&step != 0 {
		step ^= stepsAll
	}
	if l.pinned&step != 0 {
		return // both refused lately
	}
	switch step {
	case stepBurst:
		l.prev = q.q
		q.q = min(q.q+1, maxQuota)
	case stepRate:
		if l.floor > 0 && !quick && q.w-l.floor <= q.w/8 {
			// The steps held half way to the floor, each, up to
			// within an eighth of the window: pinned, as when a
			// step refused leaves that little (see revert), which
			// drops the floor once the pin lapses. Kept, the floor
			// ended every step for good, each half the last (a
			// server that stated nothing, refused a step at 10 a
			// second, then served 100, was sent 11 a second for
			// as long as it ran).
			l.pin(stepRate, now)
			step = 0
			break
		}
		d := l.rateStep()
		if d <= 0 {
			step = 0
			break
		}
		l.prev = q.w
		q.w -= d
	}
	l.trial, l.trialAt, l.last, l.revertSeq, l.cut = step, l.cycle, step, 0, 0
	l.grownAt, l.binding, l.capped = now, false, 0 // held: the cut window was the server's
}

// first reports whether the next step of growth is the learned quota's
// first: no step was taken since the first measurement, no learned burst
// was refused (an even pace on trial is not grown under), and no refusal
// of a learned quota doubled the windows between steps. It is taken one
// learned window after the measurement, not two. The measurement is a
// window's evidence already: its cycle was accepted q times, from the
// first of them to the refusal, and the key was accepted again after its
// window; a learned window held at q after it is the second, as two are
// for a later step. And a first step is the cheapest to get wrong: nothing
// was decreased, and a step refused is undone without a pause, at one
// refusal (see revert); a burst step refused shows the server's burst,
// and the rate steps from there (see stepSaturated). The step is refused,
// if it is, a window sooner, which leaves a short run more windows to
// grow in.
func (l *learner) first() bool { return l.last == 0 && l.growGap == 0 && l.smooth == 0 }

// measures reports whether the measurement that began at from is still
// waiting for the key's next acceptance.
func (l *learner) measures(from int64) bool { return l.pending && l.pendFrom == from }

// rateStep returns how much the next rate step shortens the learned
// window: w>>stride (a quarter of w at first, half of it at most, even
// for a stride restored as 0), and no more than half way to floor. Once
// the learned quota was decreased (a refusal off trial measured it again,
// or cut its rate), no more than w/(q+1), one request more a window: the
// rate is then known to lie near it, and growth is additive, as TCP's
// after its first loss; before, the steps double, to find a rate that
// may be far above the first measurement (a bucket's window measured
// from above by the refusal floor).
func (l *learner) rateStep() int64 {
	q := l.quota
	d := q.w >> min(max(l.stride, 1), 62)
	if l.growGap != 0 || l.cutSeq != 0 || l.burstKnown() {
		d = min(d, q.w/(q.q+1)) // one request more per window
	}
	if l.floor > 0 && l.floor < q.w {
		d = min(d, (q.w-l.floor)/2)
	}
	return d
}

// drain returns how long a rate step stays on trial once taken: as long
// as a bucket holding the server's burst, refilled at the rate that held,
// would take to be emptied by the faster rate on trial (burst requests at
// q/w - q/prev a second), up to maxGrowGap windows that held. A bucket's
// slack lets a rate faster than its own through for that long; a window
// the server keeps refuses the step within its first window anyway.
func (l *learner) drain() int64 {
	q := l.quota
	if l.prev <= q.w {
		return 0
	}
	b := max(l.burst, q.q)
	return min(mulDiv(mulDiv(b, q.w, q.q), l.prev, l.prev-q.w), int64(maxGrowGap)*l.prev)
}

// revert undoes the step on trial, refused at now by a request granted
// after it: back to the quota that held. A burst step refused is pinned;
// a rate step refused leaves the shortest window refused as the floor the
// next rate step goes half way to, and is pinned when that is too little
// to try. seq is the key's grants so far: refusals of requests granted up
// to it are of the same overdraw (see absorbs).
func (l *learner) revert(seq uint64, now int64) {
	q := l.quota
	switch l.trial {
	case stepBurst:
		q.q = min(max(l.prev, 1), maxQuota)
		l.pin(stepBurst, now)
		if l.growGap != 0 || l.cutSeq != 0 {
			// Decreased before: the rate step would add a request a
			// window at most (see rateStep), the rate just refused.
			l.pin(stepRate, now)
		}
	case stepRate:
		refused := q.w
		l.floor = q.w
		q.w = min(max(l.prev, 1), int64(MaxPause))
		if d := (q.w - l.floor) / 2; q.w-l.floor <= q.w/8 || q.q > 1 && mulDiv(q.q, d, q.w-d) < 1 || q.q == 1 && q.w-l.floor <= q.w>>rateStride {
			// The next step, half way, would add less than a request
			// a window: one window cannot tell it too fast. Every step
			// of a quota of one request does but the one that halves
			// w, so that each of its refused steps was pinned: nginx's
			// limit_req with no burst, 10 a second, learned as 1 per
			// 187.5 ms with 93.75 ms refused, stayed there until the
			// pin lapsed, each lapse costing two or three refusals
			// (0.575 of ideal, 7 of 100 refused; now 0.732 and 3,
			// with pinSpan). A quota of one request is pinned when a
			// quarter of w or less is left, the gap its first rate step
			// makes: a fixed window passes a smaller step for several
			// windows, until two starts fall in one. Left to go half
			// way from 10.16 s to 8.46 s, a fixed window of one per 10
			// s passed 9.31 s for its one-window trial, refused it two
			// minutes later, and the cut that followed held the key at
			// 12.41 s for good (TestLearnedQuotaOfOneFixedWindowHolds).
			l.pin(stepRate, now)
		}
		if l.even() {
			q.w = min(q.w+l.margin(refused), int64(MaxPause))
		}
	}
	burst := l.trial == stepBurst
	l.trial, l.revertSeq = 0, seq
	l.grownAt, l.binding = now, false
	if burst && l.growGap == 0 && l.cutSeq == 0 {
		// The burst is the server's, and the server is spent: the rate
		// step is taken from here, tried for one window.
		l.stepSaturated(now)
	}
}

// margin returns how much a rate step at the even pace, refused at the
// window refused, lengthens the window that held as it is restored: a
// request a window (w/(q-1), so that q-1 start where q did), and no more
// than half the step refused. The server's limit lies between the two
// rates, perhaps on the one that held, which then leaves nothing for the
// jitter of arrivals or a counter's rounding: a sliding-window counter that
// weighs its previous window and rounds to the nearest request (go-chi/
// httprate) refuses a pace of exactly its limit at some phases of its
// windows, and a refusal there cuts the rate by a quarter (see cutRate).
func (l *learner) margin(refused int64) int64 {
	q := l.quota
	return max(min(q.w/max(q.q-1, 1), (q.w-refused)/2), 0)
}

// burstKnown reports whether the learned quota, in bursts, is the server's
// burst: a burst step was refused on trial (and is pinned). A bucket that
// holds no more than q is then spent by each learned burst, from a known
// state, so that a rate step faster than its rate is refused in its first
// learned window, by less than a request when it adds less than one (see
// rateStep): rate steps are tried for one window, not until a burst would
// be spent (see drain), and add a request a window at most.
func (l *learner) burstKnown() bool { return l.pinned&stepBurst != 0 && !l.even() }

// unstep undoes every rate step taken since the last measurement, at the
// refusal at now of the lone probe that begins a learned burst: the
// window the last burst spent has not ended. A bucket that passed a rate
// for a learned window has a token for the next burst's first request
// unless the rate was q times its own; a fixed window or a sliding log
// that bursts faster than its window drift into refuses it. The window
// measured paces the key again, the rate step is pinned, and a burst step
// on trial is undone too. seq is the key's grants so far: refusals of
// requests granted up to it are of the same overdraw (see absorbs).
func (l *learner) unstep(seq uint64, now int64) {
	q := l.quota
	if l.trial == stepBurst {
		q.q = min(max(l.prev, 1), maxQuota)
	}
	q.w = min(l.measured, int64(MaxPause))
	l.pin(stepRate, now)
	l.trial, l.revertSeq, l.rated = 0, seq, false
	l.grownAt, l.binding = now, false
}

// stepSaturated takes a rate step at a refusal at now, unless the rate
// step is pinned. The server had nothing left at that refusal: a bucket
// has no slack to spend, a counter no room, so a rate faster than its
// own is refused within the step's first learned window, and the step is
// on trial for that window only, not until a bucket's burst would be
// spent (revertSeq stays set while it is; see grow).
func (l *learner) stepSaturated(now int64) {
	q := l.quota
	if l.pinned&stepRate != 0 {
		return
	}
	d := l.rateStep()
	if d <= 0 {
		return
	}
	l.prev = q.w
	q.w -= d
	l.trial, l.trialAt, l.last, l.cut = stepRate, l.cycle, stepRate, 0
	l.grownAt, l.binding = now, false
}

// cutRate decreases the learned rate multiplicatively at a refusal at now
// not of a step on trial, once the quota is paced evenly or a rate step
// held since it was measured: the rate that held was refused
// (a bucket's slack let it through for a while, or the server slowed).
// The rate is cut to three quarters of it (w grows by a third), and the
// window refused is the floor the next steps go half way to. The key is
// not paused and nothing is measured: only the refused request waits
// the refusal floor, and the refusals of requests granted up to seq are
// of the same overdraw (see absorbs). A refusal of a request granted
// after a cut, with none accepted since, is not the rate's: the server
// refuses everything (an outage, or a much smaller limit), and the key
// measures again.
func (l *learner) cutRate(seq uint64, now int64) {
	q := l.quota
	l.untry() // the rate before the step, with the burst that held
	l.floor = q.w
	q.w = min(q.w+q.w/3, int64(MaxPause))
	l.trial, l.trialAt, l.revertSeq, l.cut = 0, 0, seq, 0
	l.cutSeq, l.cutOK = seq, false
	l.grownAt, l.binding = now, false
}

// untry puts back the step on trial, if any, before a cut at a refusal off
// trial: a cut applies to the quota that held, and a step that did not hold
// yet is not kept untested.
func (l *learner) untry() {
	switch l.trial {
	case stepBurst:
		l.quota.q = max(l.prev, 1)
	case stepRate:
		l.quota.w = min(max(l.prev, 1), int64(MaxPause))
	}
}

// cutBurst decreases the learned burst by one request at a refusal at now,
// after a cut of the rate (see cutRate) that did not stop the refusals
// although requests were accepted since: a burst larger than the server's
// takes one refusal a window whatever its rate, and cutting the rate
// again and again would lengthen the window without bound. The window
// stays; the refusals of requests granted up to seq are of the same
// overdraw.
func (l *learner) cutBurst(seq uint64, now int64) {
	l.untry()
	l.quota.q = max(l.quota.q-1, 1)
	l.trial, l.trialAt, l.revertSeq, l.cut = 0, 0, seq, 0
	l.cutSeq, l.cutOK = seq, false
	l.grownAt, l.binding = now, false
}

// repace counts the start of g, refused at now by an overdraw the learner
// undid, against the learned quota. In bursts, it counts against the
// window it overdrew, not the next one: its start is counted with the
// oldest start of the learned window that ends at now (see
// startLog.redate). At the even pace, the pace runs from the refusal: the
// server had nothing left then, and a start counted a window back would
// let the next one go at once.
func (l *learner) repace(g *Lease, now int64) {
	q := l.quota
	if l.even() {
		l.relog(now, 1)
		return
	}
	q.log.redate(g.start, now-q.w)
}

// resume records that the step just undone was refused with a wait the
// server gave, which pauses the key until at: the learned windows start
// again with the probe after the pause, and the next step is counted from
// there, as after a measurement.
func (l *learner) resume(at int64) {
	if l.trial == stepRate && l.revertSeq != 0 {
		// The step taken at the refusal: after a pause the server is
		// no longer spent, and one window would not test it. It is
		// taken a learned window on, as before.
		l.quota.w, l.trial, l.quick = min(max(l.prev, 1), int64(MaxPause)), 0, true
	}
	l.quota.log.reset()
	l.lastStart = 0
	l.grownAt = max(l.grownAt, at)
}

// absorbs reports whether a refusal of the request g is one of the
// overdraw of a step already reverted: granted in the cycle the step was
// taken in or later, and no later than its revert.
func (l *learner) absorbs(g *Lease) bool {
	return l.revertSeq != 0 && g.cycle >= l.trialAt && g.seq <= l.revertSeq
}

// pinSpan returns how long a refused step stays pinned: pinWindows
// learned windows, and for a quota of one request at least pinOne
// windows, up to pinTime. Each lapse tries the step again, which a server
// whose limit did not change refuses two or three times before the step
// is pinned anew: counted in windows alone, a quota of one request paid
// that every 32 requests (nginx's limit_req with no burst, 10 a second: 9
// refused of 100), where one of 10 a window pays it every 320. Counted in
// starts alone, a quota of one request per 10 s tried again every 21
// minutes, and a server that raised its limit from 1 to 5 per 10 s was
// served 311 of the 900 it took in the 30 minutes after
// (TestLearnedQuotaAfterLimitRaised); up to 2 minutes, a sliding window
// raised from 1 to 3 a second, 351 of 1,080 in 6 minutes. For quotas of 2
// and 3 the longer pin moved the lapses of a sliding-window counter of 3
// per 200 ms (SlidingWindowRounded) to where its steps ran on to a
// refusal that undid them all, and the key was served half as much.
func (l *learner) pinSpan() int64 {
	q := l.quota
	if q.w > math.MaxInt64/pinOne {
		return math.MaxInt64
	}
	span := int64(pinWindows) * q.w
	if q.q == 1 {
		span = max(span, min(pinOne*q.w, int64(pinTime)))
	}
	return span
}

// pin stops the step refused on trial from growing for a while.
func (l *learner) pin(step uint8, now int64) {
	l.pinned |= step
	l.pinnedAt = now
	if step == stepRate {
		l.floor, l.stride = 0, rateStride
	}
}

// refused records a refusal. foreseen reports whether a quota in the
// response was spent; hinted whether the response or a live observation
// said quota was left.
//
// It reports whether the refusal is the overdraw of a step of growth: of a
// request granted after the step on trial was taken (the step is reverted
// at once), or one more of a step already reverted. Such a refusal starts
// no measurement: the quota that held before the step paces the key, and
// the refused request counts against the window it overdrew, as if it had
// started with the oldest start of the learned window that ends at now.
//
// A learned quota that was not on trial, refused for the first time, is
// first paced evenly at the same rate (smoothTrial): sliding-window
// counters and leaky buckets refuse a burst of q but pass q per w spread
// one start per w/q. That refusal too is reported as an overdraw, and does
// not pause the key. The even pace runs from the refusal: the starts the
// burst spent are what the server had left at that instant, and are not
// counted against it (counted, they held the pace's last starts until the
// learned window ended, and the key idled). A whole learned window accepted at the even pace keeps
// it (smoothOn); a request sent after the switch refused ends it
// (smoothNo), and the key backs off as before. When that refusal comes in
// the burst's own cycle, from is the instant the burst was refused: the
// key's pause counts from there (see State.Release), not from now.
//
// When the measurement was bounded from below (quick), the rate step it
// left untested is taken at that refusal too (see stepSaturated).
//
// A refusal while measuring, of a request started after the measurement
// began, bounds the window from below: it had not ended at that start.
func (l *learner) refused(g *Lease, seq, epoch uint64, now int64, foreseen, hinted bool) (overdrew bool, from int64) {
	if foreseen || g.epoch != epoch {
		return false, 0 // explained, or one more answer from a cycle already refused
	}
	if hinted {
		l.distrustFor = min(max(2*l.distrustFor, distrustMin), distrustMax)
		l.distrustUntil = now + l.distrustFor
	}
	if l.quota != nil && !l.pending {
		if l.trial != 0 && l.revertSeq != 0 && g.seq <= l.revertSeq {
			// Granted before the step taken at the last revert: one
			// more of the overdraw that step was taken from.
			l.quota.log.redate(g.start, now-l.quota.w)
			return true, 0
		}
		if l.smooth != smoothTrial && !l.even() && l.quota.q > 1 && g.cycle == l.cycle && l.cycleOK == 0 && l.measured > l.quota.w {
			// The lone probe of a learned burst refused, with the
			// window shortened since it was measured: a window the
			// last burst spent has not ended (see unstep). Not for a
			// quota of one request, every window of which is its own
			// lone probe: its refused step is reverted as any other
			// (undone back to the measurement, a leaky bucket with no
			// burst, 10 a second, was paced at one a second).
			l.unstep(seq, now)
			l.repace(g, now)
			return true, 0
		}
		if l.trial != 0 && g.cycle >= l.trialAt {
			l.revert(seq, now)
			l.repace(g, now)
			return true, 0
		}
		if l.absorbs(g) {
			l.quota.log.redate(g.start, now-l.quota.w)
			return true, 0
		}
		if (l.even() || l.rated) && (l.cutSeq == 0 || l.cutOK) {
			// A rate that held, refused: cut it, without a pause
			// or a new measurement (see cutRate). A burst refused
			// again after a cut, the rest of it accepted, overdraws
			// by its size, not its rate: it is cut by one instead
			// (see cutBurst).
			if l.cutSeq != 0 && !l.even() && l.quota.q > 1 {
				l.cutBurst(seq, now)
			} else {
				l.cutRate(seq, now)
			}
			l.repace(g, now)
			return true, 0
		}
		if l.smooth == 0 && l.trial == 0 && l.cutSeq == 0 && !l.loneRefused(g) {
			// The server refused a burst of the learned quota: pace it
			// evenly, at the same rate, before backing off.
			l.smooth, l.smoothAt, l.revertSeq, l.trialAt = smoothTrial, g.cycle, seq, g.cycle
			l.grownAt, l.binding = now, false
			if l.quick {
				// The step the measurement left untested is taken
				// from the refusal, with the even pace.
				l.quick = false
				l.stepSaturated(now)
			}
			l.relog(now, 1)
			return true, 0
		}
	}
	if q := l.quota; q != nil && !l.pending && l.smooth != smoothTrial && !l.even() && l.loneRefused(g) && l.measured <= q.w {
		// The lone probe of a learned window in bursts refused, nothing
		// accepted in its cycle and no step to undo: the window the
		// last cycle spent had not ended, and the learned one is too
		// short (see lengthen). At the even pace, the rate is too high
		// and the key backs off as below.
		l.lengthen()
	}
	trialFailed := false
	if l.quota != nil && !l.pending && l.smooth == smoothTrial {
		l.smooth = smoothNo // the rate, not the burst, was too high
		trialFailed = g.cycle == l.cycle && l.cycle == l.smoothAt
	}
	if l.pending {
		if g.start > l.pendFrom {
			// The window had not ended at its start.
			l.lo = min(max(l.lo, g.start-l.pendFrom), int64(MaxPause))
		}
		return false, 0 // refused again before the window ended: it is longer
	}
	if l.quota != nil && l.trial == 0 {
		l.growGap = min(2*max(minGrowGap, l.growGap), maxGrowGap)
	}
	l.pending, l.pendCycle, l.pendFrom = true, g.cycle, l.cycleStart
	l.lo = 0
	if trialFailed {
		// The even pace was refused in the burst's own cycle: the key
		// backs off as if from the burst refused, so that the trial
		// shifts neither the measured window nor the key's phase.
		from = l.grownAt
	}
	l.pendQ = 0
	if g.cycle == l.cycle && g.cycle != 0 {
		l.pendQ = l.cycleOK
	}
	return false, from
}

// loneRefused reports whether the refused request g is the lone probe of
// the current learned window, with nothing accepted in its cycle: the
// window the cycle before spent had not ended at its start. A burst of
// the learned quota refused only after some of it was accepted is what
// a sliding-window counter or a bucket refuses (see refused); a refused
// probe shows no room at all, which an even pace would meet as well.
func (l *learner) loneRefused(g *Lease) bool {
	return g.cycle == l.cycle && l.cycleOK == 0 && g.start == l.cycleStart
}

// lengthen lengthens the learned window by the refusal floor, at the
// refusal of a learned window's lone probe with nothing accepted in its
// cycle: the window the cycle before spent had not ended at the probe's
// start. A fixed window first measured from a burst sent part way into it
// is measured to its end, short of its length: from the burst at 0 into a
// window of 4 s that began 0.9 s earlier, accepted again at 3.1 s, it is
// learned as 3.1 s, and each learned window's probe, 3.1 s after the last
// burst, falls in the window that burst spent. The measurement that
// follows counts nothing (no acceptance in the cycle refused) and changes
// neither q nor w, so without this every learned window cost a refusal.
// The floor is the least the key then waits before it probes again; each
// such refusal adds one more, and the steps of growth shorten it again
// when too long.
func (l *learner) lengthen() {
	q := l.quota
	q.w = min(q.w+int64(RefusalFloor), int64(MaxPause))
	l.measured = q.w
}

// mulDiv returns a*b/c for non-negative a and b and a positive c,
// saturating.
func mulDiv(a, b, c int64) int64 {
	if a <= 0 || b <= 0 || c <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(min(q, math.MaxInt64))
}
