package control

import (
	"testing"
	"time"
)

// ramp.probeTimeout promises "a probe that does not answer holds the key
// for 3 seconds at most, or four of the key's smoothed round trips when
// that is longer, doubled for each probe in a row that timed out"
// (DESIGN.md §5), capped at maxSpan. With a smoothed round trip of 10 h
// (answers that hang for hours) and 16 probes in a row timed out,
// 4·rtt<<16 overflowed int64: the timeout was negative, or 262µs, and
// the probe held the key not at all.
func TestProbeTimeoutNoOverflow(t *testing.T) {
	for _, c := range []struct {
		rtt    time.Duration
		misses int32
	}{
		{10 * time.Hour, maxMisses},
		{maxSpan, 7},
		{1<<46 + 1, maxMisses}, // 19.5 h: wraps to 262 µs
	} {
		r := ramp{rtt: int64(c.rtt), misses: c.misses}
		if d := r.probeTimeout(); d < probeWait {
			t.Errorf("rtt %v, %d misses: probeTimeout %v, want at least %v (capped at maxSpan %v)",
				c.rtt, c.misses, time.Duration(d), time.Duration(probeWait), maxSpan)
		}
	}
	// Through the State: with a round trip of 2^46+1 ns (19.5 h), the
	// shifted timeout wraps to 2^18 ns, and 1 ms after the probe another
	// request probes while the first awaits its answer.
	k := &shedKey{t: t, now: instant(t0)}
	k.s.ramp = ramp{rtt: 1<<46 + 1, misses: maxMisses, cwnd: 1}
	k.grant()
	held := time.Duration(k.s.ramp.probeEnd - k.now)
	k.now += int64(time.Millisecond)
	if l, _, ok := k.try(); ok {
		t.Errorf("1 ms after the probe, while it awaits its answer, another request granted (probe %v): the probe held the key %v",
			l.Probe(), held)
	}
}

// A stall (ramp.stalled) widens the window by one. Widened to every
// request awaiting its answer, those sent before a pause included, the
// probe after the pause opened the ramp at 2, the first stall made it 21,
// and once the requests sent before the pause ended (their leases
// expired), 20 went at one instant into the server that had just refused.
func TestStallWidensByOne(t *testing.T) {
	k := &shedKey{t: t, now: instant(t0), cfg: Config{Lease: time.Minute}}
	for range 40 {
		k.answered(50 * time.Millisecond)
	}
	var ls []Lease
	for {
		l, _, ok := k.try()
		if !ok {
			break
		}
		ls = append(ls, l)
	}
	if len(ls) < 10 {
		t.Fatalf("only %d in flight before the refusal", len(ls))
	}
	refused := Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
		Refusal: Refusal{Wait: time.Second, Given: true, Retryable: true, MaxWait: time.Minute}}
	k.release(&ls[0], refused) // pauses the key 1s; the others hang
	k.now += int64(time.Second + time.Millisecond)
	p := k.grant()
	if !p.Probe() {
		t.Fatal("no probe after the pause")
	}
	k.now += int64(50 * time.Millisecond)
	k.release(&p, shedOK)
	before := k.s.ramp.cwnd
	t.Logf("after the probe: cwnd %d, awaiting %d", before, k.s.leases.awaiting())

	// One stall: one more goes.
	k.now += k.s.ramp.probeTimeout()
	n := 0
	for {
		if _, _, ok := k.try(); !ok {
			break
		}
		n++
	}
	t.Logf("at the stall: %d granted, cwnd now %d", n, k.s.ramp.cwnd)

	// The requests sent before the pause never answer: their leases end.
	k.now = ls[len(ls)-1].end + int64(time.Millisecond)
	burst := 0
	for {
		if _, _, ok := k.try(); !ok {
			break
		}
		burst++
	}
	if burst > int(before) {
		t.Errorf("once the %d requests sent before the pause expired, %d granted at one instant (ramp opened at %d after the pause; cwnd %d)",
			len(ls)-1, burst, before, k.s.ramp.cwnd)
	}
}

// A stall (the window full, nothing answered in the probe timeout) that
// comes as the learned quota's cycle renews: acquire rechecks the ramp
// (closed, a lone probe whose answer the others wait for). ramp.stalled
// set probeEnd to now, the instant the probe holds the key until, after
// it: the probe held nothing, and a second request went at the same
// instant, as another probe. The probe's grant widens nothing.
func TestStallOnRecheckLetsOne(t *testing.T) {
	k := &shedKey{t: t, now: instant(t0), cfg: Config{Lease: time.Minute}}
	for range 2 {
		k.answered(50 * time.Millisecond)
	}
	if !k.s.ramp.open || k.s.ramp.cwnd != 1 {
		t.Fatalf("setup: ramp open %v cwnd %d", k.s.ramp.open, k.s.ramp.cwnd)
	}
	w := int64(10 * time.Second)
	k.s.learn.quota = &policy{unit: unitRequests, q: 100, w: w}
	a := k.grant() // hangs
	_ = a
	k.now += k.s.ramp.probeTimeout()
	// The learned quota held a request back in a cycle begun a window ago.
	k.s.learn.held, k.s.learn.cycleStart = true, k.now-w
	if !k.s.learn.renews(k.now) {
		t.Fatal("setup: the cycle does not renew")
	}
	l1, h, ok := k.try()
	if !ok {
		t.Fatalf("the stall let nothing go: held %v", h.Reason)
	}
	t.Logf("first: probe %v; ramp open %v probeSeq %d probeEnd-now %v", l1.Probe(), k.s.ramp.open, k.s.ramp.probeSeq, time.Duration(k.s.ramp.probeEnd-k.now))
	if l2, _, ok := k.try(); ok {
		t.Errorf("a second request granted at the same instant (probe %v): the stall let two go, the recheck's probe held nothing (probeEnd = now)", l2.Probe())
	}
}

// An origin that states nothing, answers in 20 ms, and for a minute
// answers only every other request, the rest hanging (a backend stuck on a
// lock for half its workers). Each time the window is full of hung
// requests for the probe timeout, it lends a slot (ramp.stalled). When the
// backend recovers and the hung requests all answer at once, the slots
// lent come back: lent for good (and grown on by the answers that came
// meanwhile), as many went at one instant into the origin that had just
// recovered, as TestStallWidensByOne says they must not.
func TestStallsGiveBackAtSlowAnswers(t *testing.T) {
	k := &shedKey{t: t, now: instant(t0)}
	k.answered(20 * time.Millisecond) // the probe: the ramp opens at 1
	if !k.s.ramp.open {
		t.Fatal("setup: ramp not open")
	}
	before := k.s.ramp.cwnd
	type pending struct {
		l   Lease
		due int64 // 0: hangs
	}
	var fl []pending
	n := 0
	tick := int64(10 * time.Millisecond)
	end := k.now + int64(time.Minute)
	for ; k.now < end; k.now += tick {
		kept := fl[:0]
		for _, p := range fl {
			if p.due != 0 && p.due <= k.now {
				k.release(&p.l, shedOK)
				continue
			}
			kept = append(kept, p)
		}
		fl = kept
		for {
			l, _, ok := k.try()
			if !ok {
				break
			}
			n++
			due := int64(0)
			if n%2 == 0 {
				due = k.now + int64(20*time.Millisecond)
			}
			fl = append(fl, pending{l, due})
		}
	}
	hung, widened := len(fl), k.s.ramp.cwnd
	// The backend recovers: every hung request answers now.
	for i := range fl {
		k.release(&fl[i].l, shedOK)
	}
	burst := 0
	for {
		if _, _, ok := k.try(); !ok {
			break
		}
		burst++
	}
	t.Logf("ramp opened at %d; after a minute: %d hung, cwnd %d (%d once they answered); %d granted at the instant they answered", before, hung, widened, k.s.ramp.cwnd, burst)
	if k.s.ramp.misses != 0 || burst > int(k.s.ramp.cwnd) && k.s.ramp.cwnd > 0 {
		t.Errorf("%d requests granted at one instant once %d hung requests answered (ramp opened at %d for a key that states nothing; window %d, %d slots still lent): the stalls widened the window by one each and never gave it back", burst, hung, before, k.s.ramp.cwnd, k.s.ramp.misses)
	}

}

// A window held (capped) to the limit in flight a refusal showed the
// server keeps (TestShedHoldsWindowUntilRun: two, the third refused at
// once): two slow answers (4 s, past the 3 s probe timeout) hold the third
// request until one comes back, as the server requires. A stall sent it
// past the limit the key learned, into the refusal it learned from.
func TestStallNotPastHeldWindow(t *testing.T) {
	var cfg Config
	var s State
	now := instant(t0)
	try := func() (Lease, Hold, bool) {
		var l Lease
		var ask Ask
		h, ok := s.acquireAt(now, &cfg, &ask, &l, true)
		return l, h, ok
	}
	grant := func() Lease {
		t.Helper()
		l, h, ok := try()
		if !ok {
			t.Fatalf("at %v: held (%v), window %d, %d in flight", time.Duration(now-instant(t0)), h.Reason, s.ramp.cwnd, s.leases.awaiting())
		}
		return l
	}
	release := func(l *Lease, out Outcome) Plan { return s.releaseAt(at(now), now, &cfg, l, &out, true) }
	accepted := Outcome{First: true, Bytes: -1}
	refused := Outcome{First: true, Bytes: -1, Refused: true, Refusal: Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}}
	p := grant()
	now += int64(200 * time.Millisecond)
	release(&p, accepted)
	for range 20 {
		a, b := grant(), grant()
		now += int64(100 * time.Millisecond)
		release(&a, accepted)
		release(&b, accepted)
	}
	a, b, c := grant(), grant(), grant()
	release(&c, refused)
	now += int64(100 * time.Millisecond)
	release(&a, accepted)
	pr := grant()
	release(&b, accepted)
	now += int64(100 * time.Millisecond)
	release(&pr, accepted)
	if s.ramp.cwnd != 2 || !s.ramp.capped {
		t.Fatalf("setup: window %d, held %v; want 2, held", s.ramp.cwnd, s.ramp.capped)
	}
	// Two slow pages, 4 s each: the third waits for one of them.
	x, y := grant(), grant()
	for range 40 {
		now += int64(100 * time.Millisecond)
		if _, _, ok := try(); ok {
			t.Errorf("%v after two slow requests went, a third granted into the held window of 2 (the server refused a third in flight): window now %d, held %v",
				time.Duration(now-x.start), s.ramp.cwnd, s.ramp.capped)
			break
		}
	}
	release(&x, accepted)
	release(&y, accepted)
}

// The same origin, every other request hanging, for an hour (leases of
// 10 min: a hung request's slot is free again at its end). With slots lent
// for good, expired leases not giving them back, the window widened by a
// slot at each stall on top of what the answers of the others grew it by.
// The slots lent stay few (each doubles the wait for the next) and come
// back with the leases. (The answers of the others grow the window as any
// answers do, past rampCap within the hour: a server that answers half
// the requests at once is not one the ramp holds back.)
func TestStallsBounded(t *testing.T) {
	k := &shedKey{t: t, now: instant(t0)}
	k.answered(20 * time.Millisecond)
	type pending struct {
		l   Lease
		due int64 // 0: hangs (its lease expires)
	}
	var fl []pending
	n, mostLent := 0, int32(0)
	tick := int64(50 * time.Millisecond)
	start := k.now
	for end := k.now + int64(time.Hour); k.now < end; k.now += tick {
		kept := fl[:0]
		for _, p := range fl {
			switch {
			case p.due != 0 && p.due <= k.now:
				k.release(&p.l, shedOK)
			case p.due == 0 && p.l.end <= k.now:
			default:
				kept = append(kept, p)
			}
		}
		fl = kept
		for {
			l, _, ok := k.try()
			if !ok {
				break
			}
			n++
			due := int64(0)
			if n%2 == 0 {
				due = k.now + int64(20*time.Millisecond)
			}
			fl = append(fl, pending{l, due})
			mostLent = max(mostLent, k.s.ramp.misses)
		}
	}
	_ = start
	if mostLent > maxMisses {
		t.Errorf("%d slots lent at once, past %d", mostLent, maxMisses)
	}
	// The requests that hang end with their leases: every slot lent
	// comes back.
	k.now += int64(11 * time.Minute)
	k.try()
	if k.s.ramp.misses != 0 {
		t.Errorf("every lease ended, yet %d slots still lent (window %d)", k.s.ramp.misses, k.s.ramp.cwnd)
	}
}

// The clock steps back an hour (an NTP step) while the window's one
// request hangs. The stall's instant, the last grant kept in probeEnd, was
// an hour ahead, within what acquireAt bounds: the window was held for the
// hour and the probe timeout, not the 3 s of a stall.
func TestStallAfterClockBack(t *testing.T) {
	k := &shedKey{t: t, now: instant(t0)}
	k.answered(20 * time.Millisecond)
	hung := k.grant()
	_ = hung
	k.now -= int64(time.Hour) // the step
	for range 10 {
		k.now += int64(time.Second)
		if _, _, ok := k.try(); ok {
			return
		}
	}
	_, h, _ := k.try()
	t.Errorf("10 s after the clock stepped back an hour, the window's hung request still holds it (%v, wake in %v): the stall waits for the hour the clock went back",
		h.Reason, time.Duration(h.wake-k.now).Round(time.Second))
}

// A probe that answers after its timeout, when a second probe went: the
// first's answer opens the ramp, the second's miss still counted. While the
// ramp is open its misses count the slots a stall lent (see stallAt), and
// the window grows only with none lent: the miss left in them froze the
// window at its opening, 4 in flight to an origin answering in 3.5 s
// (3,000 requests over 400 workers then waited past a MaxWait of 30 s).
func TestProbeMissNotLentSlot(t *testing.T) {
	k := &shedKey{t: t, now: instant(t0)}
	p1 := k.grant()
	k.now += int64(3100 * time.Millisecond) // p1's timeout passed
	p2 := k.grant()
	if !p2.Probe() || k.s.ramp.misses != 1 {
		t.Fatalf("setup: second probe %v, misses %d", p2.Probe(), k.s.ramp.misses)
	}
	k.now += int64(400 * time.Millisecond)
	k.release(&p1, shedOK)
	if !k.s.ramp.open || k.s.ramp.misses != 0 {
		t.Fatalf("after the first probe's answer: open %v, misses %d; want open, none (no slot lent)", k.s.ramp.open, k.s.ramp.misses)
	}
	before := k.s.ramp.cwnd
	for range 5 {
		k.round(0, 3500*time.Millisecond)
	}
	if k.s.ramp.cwnd != 0 && k.s.ramp.cwnd <= before {
		t.Errorf("after five rounds of answers, window %d, as it opened (%d): it grew not", k.s.ramp.cwnd, before)
	}
}

// A stall lends a slot (cwnd 1 -> 2, misses 1); the learned quota's cycle
// then renews (recheck). Its misses zeroed, the window kept as it was, the
// slot stayed lent for good. A recheck gives it back.
func TestRecheckGivesBackLentSlot(t *testing.T) {
	k := &shedKey{t: t, now: instant(t0), cfg: Config{Lease: time.Minute}}
	for range 2 {
		k.answered(50 * time.Millisecond)
	}
	if !k.s.ramp.open || k.s.ramp.cwnd != 1 {
		t.Fatalf("setup: ramp open %v cwnd %d", k.s.ramp.open, k.s.ramp.cwnd)
	}
	before := k.s.ramp.cwnd
	w := int64(10 * time.Second)
	k.s.learn.quota = &policy{unit: unitRequests, q: 100, w: w}
	a := k.grant() // hangs until its lease ends
	k.now += k.s.ramp.probeTimeout()
	l1 := k.grant() // the stall lends a slot
	if k.s.ramp.misses != 1 || k.s.ramp.cwnd != before+1 {
		t.Fatalf("setup: after the stall misses %d cwnd %d", k.s.ramp.misses, k.s.ramp.cwnd)
	}
	k.now += int64(50 * time.Millisecond)
	k.release(&l1, shedOK) // fast: the window grows on it
	grown := k.s.ramp.cwnd
	// The learned quota's cycle renews: the next grant rechecks.
	k.s.learn.held, k.s.learn.cycleStart = true, k.now-w
	if !k.s.learn.renews(k.now) {
		t.Fatal("setup: the cycle does not renew")
	}
	p := k.grant()
	if !p.Probe() {
		t.Fatal("setup: no recheck probe")
	}
	if k.s.ramp.misses != 0 || k.s.ramp.cwnd != grown-1 {
		t.Errorf("after the recheck: cwnd %d, misses %d; want %d (the slot lent given back), none", k.s.ramp.cwnd, k.s.ramp.misses, grown-1)
	}
	k.now += int64(50 * time.Millisecond)
	k.release(&p, shedOK)
	_ = a
}

// A backend hangs for 50 s, then answers every request at once. Its window
// of 1 lent a slot at each stall (3, 9, 21, 45 s: misses 4). As they all
// answer, the first slow answers raise the smoothed round trip, and so
// slowAfter (4 rtt), past how long the later-granted lent requests took:
// those were not slow and gave nothing back, and slots stayed lent with
// nothing in flight. All come back once nothing awaits its answer.
func TestLentSlotsBackOnceNoneAwaits(t *testing.T) {
	k, hung := hungFor(t, 10*time.Minute)
	lent := k.s.ramp.misses
	for i := range hung { // the backend recovers: all answer now, oldest first
		k.release(&hung[i], shedOK)
	}
	after := k.s.ramp.misses
	c := k.s.ramp.cwnd
	for range 100 {
		k.round(64, 50*time.Millisecond)
	}
	t.Logf("%d hung (misses %d); once all answered: misses %d, cwnd %d; after 100 fast rounds cwnd %d, misses %d, in flight %d",
		len(hung), lent, after, c, k.s.ramp.cwnd, k.s.ramp.misses, k.s.leases.n)
	if k.s.ramp.misses != 0 {
		t.Errorf("every lent request answered, nothing in flight, yet %d slots count as lent: the window is frozen at %d through 100 fast rounds", k.s.ramp.misses, k.s.ramp.cwnd)
	}
}

// TestProbeMissNotLentSlot through shed.go's lift: the probe after a mark
// (a bare refusal) hangs past its timeout, a second probe goes (misses 1),
// and the first's answer lifts the mark, which opens the ramp itself
// (unshed): misses, still 1, were read as a slot lent.
func TestProbeMissNotLentThroughLift(t *testing.T) {
	k := acceptedKey(t, 40)
	x := k.grant()
	k.release(&x, shedRefused)
	var p Lease
	for range 100 {
		l, _, ok := k.try()
		if ok {
			p = l
			break
		}
		k.now += int64(100 * time.Millisecond)
	}
	if !p.Probe() {
		t.Fatal("setup: no probe after the mark")
	}
	k.now += k.s.ramp.probeTimeout()
	p2 := k.grant()
	if !p2.Probe() || k.s.ramp.misses != 1 {
		t.Fatalf("setup: second probe %v misses %d", p2.Probe(), k.s.ramp.misses)
	}
	k.now += int64(100 * time.Millisecond)
	k.release(&p, shedOK)
	k.now += int64(20 * time.Millisecond)
	k.release(&p2, shedOK)
	c := k.s.ramp.cwnd
	t.Logf("after the lift: open %v cwnd %d capped %v misses %d", k.s.ramp.open, c, k.s.ramp.capped, k.s.ramp.misses)
	for range 100 {
		k.round(64, 50*time.Millisecond)
	}
	t.Logf("after 100 fast rounds: cwnd %d misses %d", k.s.ramp.cwnd, k.s.ramp.misses)
	if k.s.ramp.misses != 0 {
		t.Errorf("nothing lent, yet misses %d after the lift: the window frozen at %d through 100 fast rounds", k.s.ramp.misses, k.s.ramp.cwnd)
	}
}

// A stream (a lease kept after its answer) holds no slot of the window:
// awaiting excludes it. Its lease expiring gave back a slot the window lent
// for a request that still hangs.
func TestKeptLeaseExpiryLeavesLentSlot(t *testing.T) {
	k := &shedKey{t: t, now: instant(t0), cfg: Config{Lease: time.Minute}}
	for range 2 {
		k.answered(5 * time.Millisecond)
	}
	if !k.s.ramp.open || k.s.ramp.cwnd != 1 {
		t.Fatalf("setup: open %v cwnd %d", k.s.ramp.open, k.s.ramp.cwnd)
	}
	s := k.grant() // a stream: answered, its body never closed
	k.now += int64(10 * time.Millisecond)
	keep := shedOK
	keep.Keep = true
	k.release(&s, keep)
	if k.s.leases.kept != 1 || k.s.leases.awaiting() != 0 {
		t.Fatalf("setup: kept %d awaiting %d", k.s.leases.kept, k.s.leases.awaiting())
	}
	k.now = s.end - k.s.ramp.slowAfter() - int64(100*time.Millisecond)
	a := k.grant() // hangs
	k.now += k.s.ramp.probeTimeout()
	b := k.grant() // the stall lends a slot for a
	if k.s.ramp.misses != 1 || k.s.ramp.cwnd != 2 {
		t.Fatalf("setup: after the stall misses %d cwnd %d", k.s.ramp.misses, k.s.ramp.cwnd)
	}
	k.now = s.end + int64(50*time.Millisecond) // the stream's lease ends; a still hangs
	if _, _, ok := k.try(); ok {
		t.Fatal("setup: granted with a and b in flight")
	}
	if k.s.ramp.misses != 1 {
		t.Errorf("the stream's lease ended, a and b still hang, yet misses %d cwnd %d: its expiry gave back the slot lent for a, though a kept lease holds none", k.s.ramp.misses, k.s.ramp.cwnd)
	}
	k.now += int64(50 * time.Millisecond)
	k.release(&b, shedOK) // b answers in 200ms: not slow
	t.Logf("after the stream's lease ended and b answered fast: cwnd %d misses %d awaiting %d", k.s.ramp.cwnd, k.s.ramp.misses, k.s.leases.awaiting())
	if _, h, ok := k.try(); !ok {
		t.Errorf("a still hangs and holds the window's only slot again (cwnd %d, misses %d, held %v): the stream's expired lease, which held no slot, gave back the slot lent for a", k.s.ramp.cwnd, k.s.ramp.misses, h.Reason)
	}
	_ = a
}

// A request that hung past its lease gives its lent slot back when the
// lease is reaped; its answer, coming after, slow, gave back another, lent
// for a request that still hangs.
func TestExpiredThenAnsweredGivesBackOnce(t *testing.T) {
	k := &shedKey{t: t, now: instant(t0), cfg: Config{Lease: time.Minute}}
	for range 2 {
		k.answered(5 * time.Millisecond)
	}
	if !k.s.ramp.open || k.s.ramp.cwnd != 1 {
		t.Fatalf("setup: open %v cwnd %d", k.s.ramp.open, k.s.ramp.cwnd)
	}
	a := k.grant() // hangs past its lease, then answers
	k.now += k.s.ramp.probeTimeout()
	_ = k.grant() // b: lent for a; hangs
	k.now += k.s.ramp.probeTimeout()
	_ = k.grant() // c: lent for a and b; hangs
	if k.s.ramp.misses != 2 {
		t.Fatalf("setup: misses %d cwnd %d", k.s.ramp.misses, k.s.ramp.cwnd)
	}
	k.now = a.end + int64(time.Millisecond)
	k.try() // a's lease reaped: one slot back
	if k.s.ramp.misses != 1 {
		t.Fatalf("setup: after a's lease ended misses %d", k.s.ramp.misses)
	}
	k.now += int64(time.Second)
	k.release(&a, shedOK) // a's late answer
	t.Logf("after a's late answer: misses %d cwnd %d awaiting %d", k.s.ramp.misses, k.s.ramp.cwnd, k.s.leases.awaiting())
	if k.s.ramp.misses != 1 {
		t.Errorf("a gave back twice (its lease's end, then its answer): misses %d, window %d with b and c still hanging (%d awaiting)", k.s.ramp.misses, k.s.ramp.cwnd, k.s.leases.awaiting())
	}
}

// As TestLentSlotsBackOnceNoneAwaits, but the newest lent request hangs
// past its lease while the others answer at once. Its lease's end gave one
// slot back (reapLeases), its late answer none: nothing awaited its
// answer, yet slots stayed lent, and the window let them go at once. An
// expiry that leaves none awaiting gives them all back.
func TestLentSlotsBackAtLastLeaseReaped(t *testing.T) {
	k, hung := hungFor(t, time.Minute)
	lent := k.s.ramp.misses
	last := hung[len(hung)-1]
	for i := range hung[:len(hung)-1] { // all but the newest answer now, oldest first
		k.release(&hung[i], shedOK)
	}
	mid := k.s.ramp.misses
	k.now = last.end + int64(time.Second) // the newest's lease ends: reaped
	k.release(&last, shedOK)              // its late answer
	t.Logf("%d hung, lent %d; after all but one answered: misses %d; after the last was reaped and answered late: misses %d cwnd %d awaiting %d",
		len(hung), lent, mid, k.s.ramp.misses, k.s.ramp.cwnd, k.s.leases.awaiting())
	if k.s.leases.awaiting() != 0 {
		t.Fatalf("setup: %d still awaiting", k.s.leases.awaiting())
	}
	if k.s.ramp.misses != 0 {
		made := k.s.ramp.cwnd - k.s.ramp.misses
		burst := 0
		for range 100 {
			if _, _, ok := k.try(); !ok {
				break
			}
			burst++
		}
		t.Errorf("nothing awaits its answer, yet %d slots still lent: %d granted at one instant, the window answers made %d", k.s.ramp.misses, burst, made)
	}
}

// lentSlowKey returns a key whose open ramp (cwnd 1) lent one slot: x
// hangs, l went on the slot lent for it, and now is past l's slowAfter.
func lentSlowKey(t *testing.T) (k *shedKey, x, l Lease) {
	k = &shedKey{t: t, now: instant(t0), cfg: Config{Lease: 10 * time.Minute}}
	for range 2 {
		k.answered(5 * time.Millisecond)
	}
	if !k.s.ramp.open || k.s.ramp.cwnd != 1 {
		t.Fatalf("setup: open %v cwnd %d", k.s.ramp.open, k.s.ramp.cwnd)
	}
	x = k.grant() // hangs
	k.now += k.s.ramp.probeTimeout()
	l = k.grant() // lent for x
	if k.s.ramp.misses != 1 || k.s.ramp.cwnd != 2 {
		t.Fatalf("setup: misses %d cwnd %d", k.s.ramp.misses, k.s.ramp.cwnd)
	}
	k.now = l.start + k.s.ramp.slowAfter() + int64(time.Second)
	return k, x, l
}

func burst(k *shedKey) int {
	n := 0
	for range 100 {
		if _, _, ok := k.try(); !ok {
			break
		}
		n++
	}
	return n
}

// A slow lent request whose Release with Keep a Store failed (not
// applied: the state never saw its answer) ends by EndUnkept, which gives
// back the slot lent as a slow Release does. (Giving none back, as it did
// for a while, left the window one wider than answers made it.)
func TestEndUnkeptSlowGivesBackLentSlot(t *testing.T) {
	// Reference: l answers slowly, its Release applied.
	ref, _, rl := lentSlowKey(t)
	ref.release(&rl, shedOK)
	refMisses, refCwnd, refBurst := ref.s.ramp.misses, ref.s.ramp.cwnd, burst(ref)

	// The same request, its Release with Keep failed by the Store.
	k, x, l := lentSlowKey(t)
	k.s.EndUnkept(at(k.now), &k.cfg, &l)
	m, c, aw := k.s.ramp.misses, k.s.ramp.cwnd, k.s.leases.awaiting()
	b := burst(k)
	t.Logf("slow Release: misses %d cwnd %d burst %d; EndUnkept (Release not applied): misses %d cwnd %d awaiting %d burst %d",
		refMisses, refCwnd, refBurst, m, c, aw, b)
	if m != refMisses || c != refCwnd {
		t.Errorf("x (end %d) still hangs; l was slow and ended, its answer never seen: misses %d (want %d), cwnd %d (want %d)",
			x.end, m, refMisses, c, refCwnd)
	}
}

// hungFor returns a key (leases of lease) whose ramp opened on three fast
// answers, then lent slots for 50 s to requests that all hang: those
// requests.
func hungFor(t *testing.T, lease time.Duration) (*shedKey, []Lease) {
	k := &shedKey{t: t, now: instant(t0), cfg: Config{Lease: lease}}
	for range 3 {
		k.answered(50 * time.Millisecond)
	}
	if !k.s.ramp.open {
		t.Fatal("setup: not open")
	}
	var hung []Lease
	start := k.now
	for k.now < start+int64(50*time.Second) {
		for {
			l, _, ok := k.try()
			if !ok {
				break
			}
			hung = append(hung, l)
		}
		k.now += int64(100 * time.Millisecond)
	}
	return k, hung
}
