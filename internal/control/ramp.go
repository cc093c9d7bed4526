package control

import "time"

// ramp keeps one invariant: after a pause, and on a key's first request, a
// single request probes; the others follow once its answer came back, up to
// cwnd in flight, and cwnd grows with each answer. A probe that has not
// answered after probeTimeout lets another request probe; so does a full
// window none of whose requests has answered in as long (see stallAt).
type ramp struct {
	open     bool   // the probe came back: requests follow, up to cwnd in flight
	cwnd     int32  // most requests in flight; 0: no limit
	acc      int32  // growth toward the next step, in thousandths of a request
	probeSeq uint64 // the probe in flight; 0: none
	probeEnd int64  // when it stops holding the others: a probe that never answers does not hold the key forever; once open, the last answer or grant (see stallAt), 0 if none

	rtt    int64 // smoothed latency of the key's answers; 0: none yet
	misses int32 // probes in a row that did not answer in time; once open, the slots a stall lent (see stallAt)
	keep   bool  // the probe checks a new learned window: cwnd stays as it was (see recheck)
	capped bool  // cwnd was cut to what a refusal showed the server holds in flight: it grows by a request per cwnd<<edge answers, and not at all until shedRun acceptances since the refusal (see shed.go)
	edge   uint8 // refusals of the held window in a row a step past it at edgeAt or below (see unshed), up to maxEdge: each halves its growth
	edgeAt int32 // the others in flight at the grant of the last refused a step past the held window; 0: none
}

// Tuning of the ramp.
const (
	// rampFast is the round trip from which the ramp triples each round
	// trip; below it, it grows in proportion to its round trip (a key
	// that states its quotas by one per answer at least): in wall time, cwnd
	// grows alike whatever the round trip (by e every rampFast/2). The
	// ramp is there to make the first refusal of a silent server cheap:
	// the requests in flight when it comes are refused with it. On a slow
	// origin, a slow ramp would cost more time than that refusal saves; on
	// a fast one, a few requests in flight already send faster than any
	// server that limits its rate lets through, and more would only be
	// refused together.
	rampFast = int64(200 * time.Millisecond)
	// probeWait is how long a probe holds the key at least before another
	// request may probe, and probeRTTs how many of the key's round trips
	// (when it has answered before) it holds it at least; each probe in a
	// row that times out doubles it.
	probeWait = int64(3 * time.Second)
	probeRTTs = 4
	maxMisses = 16
	// maxEdge bounds ramp.edge: a held window refused that many times
	// in a row grows by a request per 32 round trips.
	maxEdge = 5
)

// restart makes the next request a lone probe.
func (r *ramp) restart() {
	if r.open {
		r.misses = 0 // slots lent (see stallAt); no probe timed out
	}
	r.open, r.cwnd, r.keep, r.capped, r.edge, r.edgeAt = false, 1, false, false, 0, 0
}

// recheck makes the next request a lone probe, after which cwnd is what
// it was: it begins a learned window, which a refusal may show began too
// early.
func (r *ramp) recheck() {
	if r.open {
		r.giveBack(int64(r.misses)) // the window it opens with again has no slot lent (see stallAt)
		r.open, r.keep = false, true
	}
}

// probeOut reports whether a probe is in flight and the others must wait
// for its answer.
func (r *ramp) probeOut(now int64) bool { return !r.open && r.probeSeq != 0 && now < r.probeEnd }

// admits reports whether one more request may go with inflight in flight,
// once the probe has answered. Before, the probe goes whatever is in
// flight: requests sent before a pause, or a probe that timed out, must
// not hold it back.
func (r *ramp) admits(inflight int64) bool { return r.cwnd <= 0 || inflight < int64(r.cwnd) }

// probeTimeout returns how long a probe holds the key before another
// request may probe.
func (r *ramp) probeTimeout() int64 {
	d, m := r.slowAfter(), min(max(r.misses, 0), maxMisses)
	if d > int64(maxSpan)>>m {
		return int64(maxSpan) // doubled past it: shifted, it wrapped around (19.5 h and 16 misses held the key 262µs)
	}
	return d << m
}

// slowAfter returns how long an answer takes at least to be slow for the
// key: 3 seconds, or four of its smoothed round trips when that is longer
// (the probe's timeout before any doubling).
func (r *ramp) slowAfter() int64 {
	return min(max(probeWait, probeRTTs*min(r.rtt, int64(maxSpan))), int64(maxSpan))
}

// A full window whose requests do not answer (a slow page, one that hangs
// until its lease ends) would hold every slot while the server serves
// others at once: one held the only slot of a key that states nothing for
// two minutes. So, as a probe that does not answer lets another probe, a
// full window none of whose requests has answered, nor one been granted,
// for the probe timeout lends one more slot (stallAt, stalled). While
// open, misses counts the slots lent, each doubling the timeout before the
// next; a slow answer (slowAfter), which does not grow the window, or an
// expired lease gives one back (giveBack), and all come back once nothing
// awaits its answer, so that the window is what answers made it once the
// slow requests are done. (Lent for good, the slots let as many go at
// once when the slow requests answered together.) A window held to a
// limit in flight a refusal showed (capped) lends nothing: the server
// refuses past it. The instant is kept in probeEnd, which the probe no
// longer needs once the ramp is open, and the count in misses, which
// counts nothing else then: fields of their own would have made a form a
// version before them cannot read, and a key shared with one start over
// at every write.

// stallAt returns when the open ramp's window, full, lends one more slot
// (0: not open, capped, without limit, or never heard from).
func (r *ramp) stallAt() int64 {
	if !r.open || r.capped || r.cwnd <= 0 || r.probeEnd == 0 {
		return 0
	}
	return addSat(r.probeEnd, r.probeTimeout())
}

// stalled records a grant at now that stallAt let go past the full
// window: the window widens by one slot, lent. (Widened to all awaiting
// their answers, requests sent before a pause among them, which the window
// holds no slot for, it let as many go at once when they ended.) A grant
// that closed the ramp (a learned window begun: see recheck) is its lone
// probe, which the others wait for: nothing to lend.
func (r *ramp) stalled(now int64) {
	if !r.open || r.misses >= maxMisses {
		return
	}
	if r.cwnd++; r.cwnd >= rampCap {
		r.cwnd = 0
	}
	r.misses++
	r.probeEnd = now
}

// giveBack takes back up to n slots the window lent (see stallAt): n slow
// requests ended.
func (r *ramp) giveBack(n int64) {
	if !r.open || r.misses <= 0 || n <= 0 {
		return
	}
	k := int32(min(n, int64(r.misses)))
	r.misses -= k
	if r.cwnd > 0 {
		r.cwnd = max(r.cwnd-k, 1)
	}
}

// granted records a grant at now of a request whose lease ends at end; it
// reports whether the request is a probe.
func (r *ramp) granted(seq uint64, now, end int64) bool {
	if r.open {
		r.probeEnd = now
		return false
	}
	if r.probeSeq != 0 {
		r.misses = min(r.misses+1, maxMisses) // the last probe timed out
	}
	r.probeSeq, r.probeEnd = seq, min(end, addSat(now, r.probeTimeout()))
	return true
}

// returned records the end of the request seq, after d (0: unknown),
// with inflight others awaiting their answers; counted reports that its
// lease still counted, and its answer was not seen before (one whose lease
// ended gave its slot back then): a slow one gives back a slot the window
// lent (see stallAt), and so do they all once none awaits its answer (a
// slow request lent late may have taken less than slowAfter, raised by
// the answers of those before it). It reports whether one was given back:
// the window does not grow on that answer.
func (r *ramp) returned(seq uint64, d, inflight int64, counted bool) bool {
	if r.probeSeq == seq {
		r.probeSeq, r.probeEnd, r.misses = 0, 0, 0
		return false
	}
	switch {
	case !r.open || r.misses <= 0:
		return false
	case inflight == 0:
		r.giveBack(int64(r.misses))
	case counted && d >= r.slowAfter():
		r.giveBack(1)
	default:
		return false
	}
	return true
}

// observe records the latency d of an answer at now.
func (r *ramp) observe(now, d int64) {
	if r.open {
		r.probeEnd = now
	}
	d = min(max(d, 1), int64(maxSpan))
	if r.rtt == 0 {
		r.rtt = d
	} else {
		r.rtt += (d - r.rtt) / 8 // as TCP smooths round trips (RFC 6298 §2)
	}
}

// opened records the probe's answer. One request may follow, for a key
// that states nothing and answers within rampFast: its first refusal
// comes with every request in flight, and a server that limits its rate
// at all lets a request a round trip through; two when another request
// still awaits its answer (one sent before the probe, or a probe that
// timed out, whose answer may never come), so that it does not hold the
// key (a body still streaming counts against no cwnd); four
// when the key states its quotas (the fresh answer says what is left) or
// its round trip is long.
func (r *ramp) opened(now int64, hinted, others bool) {
	// The probe answered: it holds nothing more, no probe timed out in a
	// row, and probeEnd and misses are the open ramp's (see stallAt).
	r.probeSeq, r.probeEnd, r.misses = 0, now, 0
	if r.keep {
		r.open, r.keep = true, false
		return
	}
	r.open, r.cwnd, r.acc = true, 1, 0
	switch {
	case hinted || r.rtt >= rampFast:
		r.cwnd = 4
	case others:
		r.cwnd = 2
	}
}

// grow widens cwnd after an answer. Only a refusal tells where a limit
// is, and the requests in flight when it comes are refused with it, so
// the ramp grows as fast in wall time whatever the key's round trip: by
// two requests per answer times its round trip over rampFast (a tenth of
// a request per answer at 10ms, a thousandth at least), tripling each
// round trip from rampFast. (At least one more each round trip made a key
// answering in 5ms or less send six or more at once into the first
// refusal of a limit of 20: all refused.)
//
// A key that states its quotas grows by one per answer at least:
// doubling each round trip below 100ms, tripling from rampFast as a key
// that states nothing. Its answers say what is left, and bound what is
// sent, but a server may state more than it lets through (a quota or
// what is left overstated, a proxy's count), and then the ramp is the
// only bound. Doubling, the flight sent into the first refusal is no
// more than three requests over all the key sent before it (1, 4, 8, 16
// after 1, 5, 13), as TCP's slow start bounds its own: against a server
// stating 5000 times its quota of 20 a second, tripling sent up to 36
// (after 1, 4 and 12) into the 3 requests left, and 33 to 37 of 200 were
// refused with 100 workers whenever the refusals took a round trip to
// come back; doubling sends 16 into 7.
//
// A window cut to what a limit in flight holds (capped) grows by a
// request per cwnd answers instead, a request a round trip, and not at
// all while held: each step past the limit costs a refusal, and the
// answers at the new width show what it holds before the next. Each
// refusal in a row of a step past the window at the level the last was
// refused at (edge, see unshed) halves that, down to a request per 32
// round trips (maxEdge): a limit that stays where it is costs a refusal
// every few seconds, not every 33 requests (at four in flight answering
// in 100 ms, 28 of 1,000 requests were refused).
func (r *ramp) grow(hinted, held bool) {
	if r.cwnd <= 0 || !r.open {
		return
	}
	if r.capped && hinted {
		r.capped, r.edge, r.edgeAt = false, 0, 0 // stated quotas pace a key that states them
	}
	if r.capped {
		if held {
			return
		}
		acc := int64(r.acc) + max(1000/(int64(max(r.cwnd, 1))<<min(r.edge, maxEdge)), 1)
		r.acc = int32(acc % 1000)
		if r.cwnd += int32(acc / 1000); r.cwnd >= rampCap {
			r.cwnd, r.capped, r.edge, r.edgeAt = 0, false, 0, 0
		}
		return
	}
	// Thousandths of a request, rounded up, so that an answer counts a
	// thousandth at least: a key answering within 100µs would otherwise
	// never grow.
	step := (2000*min(r.rtt, rampFast) + rampFast - 1) / rampFast
	if hinted {
		step = max(step, 1000) // one per answer at least: doubling each round trip
	}
	acc := int64(r.acc) + step
	r.acc = int32(acc % 1000)
	if r.cwnd += int32(acc / 1000); r.cwnd >= rampCap {
		r.cwnd = 0
	}
}
