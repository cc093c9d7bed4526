package control

// ramp keeps one invariant: after a pause, and on a key's first request, a
// single request probes; the others follow once its answer came back, up to
// cwnd in flight, and cwnd grows with each answer.
type ramp struct {
	open     bool   // the probe came back: requests follow, up to cwnd in flight
	cwnd     int32  // most requests in flight; 0: no limit
	acc      int32  // answers counted toward the next additive step
	probeSeq uint64 // the probe in flight; 0: none
	probeEnd int64  // when its lease ends: a probe that never answers does not hold the key forever
}

// restart makes the next request a lone probe.
func (r *ramp) restart() { r.open, r.cwnd = false, 1 }

// probeOut reports whether a probe is in flight and the others must wait
// for its answer.
func (r *ramp) probeOut(now int64) bool { return !r.open && r.probeSeq != 0 && now < r.probeEnd }

// admits reports whether one more request may go with inflight in flight.
func (r *ramp) admits(inflight int64) bool { return r.cwnd <= 0 || inflight < int64(r.cwnd) }

// granted records a grant; it reports whether the request is a probe.
func (r *ramp) granted(seq uint64, end int64) bool {
	if r.open {
		return false
	}
	r.probeSeq, r.probeEnd = seq, end
	return true
}

// returned records the end of the request seq.
func (r *ramp) returned(seq uint64) {
	if r.probeSeq == seq {
		r.probeSeq, r.probeEnd = 0, 0
	}
}

// opened records the probe's answer: two requests may follow, four when
// the key states its quotas (the fresh answer says what is left).
func (r *ramp) opened(hinted bool) {
	r.open, r.cwnd, r.acc = true, 2, 0
	if hinted {
		r.cwnd = 4
	}
}

// grow widens cwnd after an answer: tripling each round trip for a key
// that states its quotas, by one each round trip for one that never did,
// since only a refusal will tell where its limit is.
func (r *ramp) grow(hinted bool) {
	if r.cwnd <= 0 || !r.open {
		return
	}
	step := int32(2) // tripling each round trip
	if !hinted {
		if r.acc++; r.acc < r.cwnd {
			return
		}
		r.acc, step = 0, 1
	}
	if r.cwnd += step; r.cwnd >= rampCap {
		r.cwnd = 0
	}
}
