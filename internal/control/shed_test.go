package control

import (
	"bytes"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// The rule for refusals of no rate is read on both paths alike: a key
// driven through a refusal after 40 acceptances, lifted by a request sent
// after it, and through a refusal its probe confirms, ends in the same
// State whether its acceptances took the quiet path or the full one.
func TestShedQuietEqualsFull(t *testing.T) {
	var cfg Config
	var fast, full State
	now := instant(t0)
	check := func(what string) {
		t.Helper()
		a, _ := fast.MarshalBinary()
		b, _ := full.MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: quiet path\n%x\nfull path\n%x", what, a, b)
		}
	}
	grant := func() (Lease, Lease) {
		t.Helper()
		var a, b Lease
		var ask Ask
		_, okA := fast.acquireAt(now, &cfg, &ask, &a, true)
		_, okB := full.acquireAt(now, &cfg, &ask, &b, false)
		if !okA || !okB {
			t.Fatalf("at %v: not granted (quiet %v, full %v)", time.Duration(now-instant(t0)), okA, okB)
		}
		check("grant")
		return a, b
	}
	release := func(a, b *Lease, out Outcome) {
		t.Helper()
		pa := fast.releaseAt(at(now), now, &cfg, a, &out, true)
		pb := full.releaseAt(at(now), now, &cfg, b, &out, false)
		if pa != pb {
			t.Fatalf("plans differ: %+v, %+v", pa, pb)
		}
		check("release")
	}
	accepted := Outcome{First: true, Bytes: -1}
	refused := Outcome{First: true, Bytes: -1, Refused: true, Refusal: Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}}
	serial := func(n int) {
		for range n {
			a, b := grant()
			now += int64(5 * time.Millisecond)
			release(&a, &b, accepted)
		}
	}
	serial(40)
	// Refused with another in flight, accepted after; the probe
	// accepted lifts the mark.
	xa, xb := grant()
	ya, yb := grant()
	now += int64(time.Millisecond)
	release(&xa, &xb, refused)
	if fast.shed.seq == 0 {
		t.Fatalf("no mark after a bare refusal that followed 40 acceptances")
	}
	release(&ya, &yb, accepted)
	qa, qb := grant()
	release(&qa, &qb, accepted)
	if fast.shed.seq != 0 || fast.learn.pending || now < fast.pauseUntil {
		t.Fatalf("the probe accepted did not lift the mark: %+v, measuring %v", fast.shed, fast.learn.pending)
	}
	// 32 more, refused, and the probe accepted: lifted again.
	serial(32)
	xa, xb = grant()
	release(&xa, &xb, refused)
	pa, pb := grant()
	if !pa.probe {
		t.Fatalf("the request after the refusal is no probe")
	}
	release(&pa, &pb, accepted)
	if fast.learn.quota != nil || fast.learn.pending {
		t.Fatalf("the probe accepted, yet a quota was learned or is measured")
	}
	// 32 more, refused, and the probe refused: paused and measured.
	serial(32)
	xa, xb = grant()
	release(&xa, &xb, refused)
	pa, pb = grant()
	release(&pa, &pb, refused)
	if now >= fast.pauseUntil || !fast.learn.pending {
		t.Fatalf("the probe refused, yet the key is not paused and measuring")
	}
}

// The mark's tail reads back, and a tail no controller writes (a grant
// beyond the key's, a count beyond shedRun, nothing set) is rejected.
func TestShedTail(t *testing.T) {
	s := State{seq: 9, epoch: 4}
	s.touch(instant(t0))
	s.shed = shed{seq: 7, epoch: 3, cwnd: 12, sent: 4, ok: 5, most: 3, top: 4, held: true}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil || back.shed != s.shed {
		t.Fatalf("the mark read back as %+v (%v), want %+v", back.shed, err, s.shed)
	}
	// A window held, with no mark, is written and read back too.
	held := State{seq: 9, epoch: 4}
	held.touch(instant(t0))
	held.ramp.capped = true
	hb, _ := held.MarshalBinary()
	back = State{}
	if err := back.UnmarshalBinary(hb); err != nil || !back.ramp.capped {
		t.Errorf("a held window read back as %v (%v)", back.ramp.capped, err)
	}
	for _, bad := range []shed{{seq: 10, epoch: 3}, {seq: 7, epoch: 5}, {ok: shedRun + 1}, {cwnd: rampCap + 1, seq: 1}, {sent: rampCap + 1, seq: 1}, {most: rampCap + 1, top: rampCap + 1}, {seq: 1, most: 3, top: 2}, {seq: 7, epoch: 3, pendQ: 7}, {held: true, ok: 3}, {seq: 7, epoch: 3, held: true}} {
		s.shed = bad
		b, _ := s.MarshalBinary()
		if err := back.UnmarshalBinary(b); err == nil {
			t.Errorf("a mark of %+v on a key of %d grants in epoch %d was read back", bad, s.seq, s.epoch)
		}
	}
	s.shed = shed{}
	b, _ = s.MarshalBinary()
	if err := back.UnmarshalBinary(append(b, tailShed, 0, 0, 0, 0, 0, 0, 0)); err == nil {
		t.Errorf("an empty mark was read back")
	}
}

// A limit of requests in flight, reached: the key, refused with one more
// in flight than any accepted request had, holds its window to what was
// in flight, and grows it again only after 32 acceptances, by a request
// a window of answers.
func TestShedHoldsWindowUntilRun(t *testing.T) {
	var cfg Config
	var s State
	now := instant(t0)
	grant := func() Lease {
		t.Helper()
		var l Lease
		var ask Ask
		if h, ok := s.acquireAt(now, &cfg, &ask, &l, true); !ok {
			t.Fatalf("at %v: held (%v), window %d, %d in flight", time.Duration(now-instant(t0)), h.Reason, s.ramp.cwnd, s.leases.awaiting())
		}
		return l
	}
	release := func(l *Lease, out Outcome) Plan { return s.releaseAt(at(now), now, &cfg, l, &out, true) }
	accepted := Outcome{First: true, Bytes: -1}
	refused := Outcome{First: true, Bytes: -1, Refused: true, Refusal: Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}}
	// A probe, answered in 200ms: the key opens to four in flight.
	p := grant()
	now += int64(200 * time.Millisecond)
	release(&p, accepted)
	// Two in flight at a time, accepted: the most in flight at a grant
	// is one other.
	for range 20 {
		a, b := grant(), grant()
		now += int64(100 * time.Millisecond)
		release(&a, accepted)
		release(&b, accepted)
	}
	// Three in flight: the third refused at once, sent with two others
	// in flight.
	a, b, c := grant(), grant(), grant()
	release(&c, refused)
	if s.shed.seq == 0 || s.shed.sent != 2 || now < s.pauseUntil {
		t.Fatalf("no mark, or not of two in flight, or paused: %+v", s.shed)
	}
	now += int64(100 * time.Millisecond)
	release(&a, accepted)
	pr := grant()
	if !pr.probe {
		t.Fatalf("the request after the refusal is no probe")
	}
	release(&b, accepted)
	now += int64(100 * time.Millisecond)
	release(&pr, accepted)
	if s.ramp.cwnd != 2 || !s.ramp.capped || s.learn.quota != nil {
		t.Fatalf("after the probe: window %d, held %v, learned %v; want 2, held, nothing", s.ramp.cwnd, s.ramp.capped, s.learn.quota != nil)
	}
	for i := range 40 { // acceptances since the refusal: a, b, the probe, then two a step
		x, y := grant(), grant()
		now += int64(100 * time.Millisecond)
		release(&x, accepted)
		release(&y, accepted)
		if n := 2*i + 5; n < shedRun && s.ramp.cwnd != 2 {
			t.Fatalf("the window grew to %d after %d acceptances", s.ramp.cwnd, n)
		}
	}
	// 51 answers past the hold, a request per window of answers: 2+3+...+9
	// is 44, and 10 more make 11 (a ramp not held grows by one an
	// answer at this round trip, 51).
	if s.ramp.cwnd < 10 || s.ramp.cwnd > 11 {
		t.Errorf("after 83 acceptances, 51 of them past the hold: window %d; want it grown by a request a window of answers, to 10 or 11", s.ramp.cwnd)
	}
}

// shedKey drives one State on the full path at fixed instants.
type shedKey struct {
	t   *testing.T
	s   State
	cfg Config
	now int64
}

func (k *shedKey) try() (Lease, Hold, bool) {
	var l Lease
	var ask Ask
	h, ok := k.s.acquireAt(k.now, &k.cfg, &ask, &l, false)
	return l, h, ok
}

func (k *shedKey) grant() Lease {
	k.t.Helper()
	l, h, ok := k.try()
	if !ok {
		k.t.Fatalf("at %v: held (%v)", time.Duration(k.now-instant(t0)), h.Reason)
	}
	return l
}

func (k *shedKey) release(l *Lease, o Outcome) Plan {
	return k.s.releaseAt(at(k.now), k.now, &k.cfg, l, &o, false)
}

// answered grants one request, which is accepted d later.
func (k *shedKey) answered(d time.Duration) {
	k.t.Helper()
	l := k.grant()
	k.now += int64(d)
	k.release(&l, shedOK)
}

// round grants up to most requests (none: no bound) until the key holds
// one, and rtt later they are all accepted; it returns how many went.
func (k *shedKey) round(most int, rtt time.Duration) int {
	var ls []Lease
	for most <= 0 || len(ls) < most {
		l, _, ok := k.try()
		if !ok {
			break
		}
		ls = append(ls, l)
	}
	k.now += int64(rtt)
	for i := range ls {
		k.release(&ls[i], shedOK)
	}
	return len(ls)
}

// acceptedKey returns a key that states nothing and accepted n requests
// one after another, 50ms apart.
func acceptedKey(t *testing.T, n int) *shedKey {
	k := &shedKey{t: t, now: instant(t0)}
	for range n {
		l := k.grant()
		k.now += int64(50 * time.Millisecond)
		k.release(&l, shedOK)
	}
	return k
}

// liftedKey returns acceptedKey(t, 40) refused one more with a bare 429,
// whose probe was accepted 50ms later: lifted.
func liftedKey(t *testing.T) *shedKey {
	k := acceptedKey(t, 40)
	x := k.grant()
	k.release(&x, shedRefused)
	k.answered(50 * time.Millisecond) // the probe
	return k
}

var (
	shedOK      = Outcome{First: true, Bytes: -1}
	shedRefused = Outcome{First: true, Bytes: -1, Refused: true, Refusal: Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}}
)

// A body still streaming does not hold the probe after a mark, as it holds
// no probe after a pause (see end.go): counted, a stream begun before the
// refusal held the key until it ended or its lease did, ten minutes.
func TestShedProbeIgnoresStreams(t *testing.T) {
	k := acceptedKey(t, 40)
	stream := k.grant()
	keep := shedOK
	keep.Keep = true
	k.now += int64(50 * time.Millisecond)
	k.release(&stream, keep) // its body still arriving
	x := k.grant()
	k.now += int64(50 * time.Millisecond)
	if p := k.release(&x, shedRefused); p.Pause != 0 || k.s.shed.seq == 0 {
		t.Fatalf("no mark: plan %+v", p)
	}
	k.now += int64(time.Millisecond)
	if pr, h, ok := k.try(); !ok || !pr.probe {
		t.Errorf("the probe is held (%v, wake in %v) by a body streaming", h.Reason, time.Duration(instant(h.Wake())-k.now))
	}
}

// A window cut by a limit in flight is held for 32 acceptances since the
// refusal, then grows by a request a window of answers, also when the
// marked flight itself brought the 32.
func TestShedCutGrowsAfterLargeFlight(t *testing.T) {
	k := &shedKey{t: t, now: instant(t0)}
	round := func(most int) int { return k.round(most, 200*time.Millisecond) }
	for k.s.ramp.cwnd != 0 && k.s.ramp.cwnd < 41 || !k.s.ramp.open {
		round(20)
	}
	for range 3 {
		round(20) // 20 at a time: nineteen others, many times
	}
	if k.s.shed.most != 19 {
		t.Fatalf("most %d, want 19", k.s.shed.most)
	}
	// 40 at once: the 21st refused, the 39 others accepted.
	var ls []Lease
	for range 40 {
		ls = append(ls, k.grant())
	}
	k.now += int64(200 * time.Millisecond)
	k.release(&ls[20], shedRefused)
	for i := range ls {
		if i != 20 {
			k.release(&ls[i], shedOK)
		}
	}
	k.answered(200 * time.Millisecond) // the probe
	if k.s.learn.pending || k.s.ramp.cwnd != 20 || k.s.shed.ok < shedRun {
		t.Fatalf("after the lift: measuring %v, window %d, %d acceptances; want none, 20, %d or more", k.s.learn.pending, k.s.ramp.cwnd, k.s.shed.ok, shedRun)
	}
	for range 10 {
		round(1000)
	}
	if k.s.ramp.cwnd <= 20 {
		t.Errorf("after 200 more acceptances: window %d; want it grown past 20", k.s.ramp.cwnd)
	}
}

// A window cut by a limit in flight no longer holds a key whose server
// states its quotas since: they pace it, and its window grows as a
// hinted key's does.
func TestShedCutEndsOnceStated(t *testing.T) {
	var s State
	s.ramp = ramp{open: true, cwnd: 2, capped: true}
	s.flags |= flagHinted
	s.ramp.grow(true, true)
	if s.ramp.capped || s.ramp.cwnd <= 2 {
		t.Errorf("a key that states its quotas: window %d, held %v; want it grown, not held", s.ramp.cwnd, s.ramp.capped)
	}
}

// A lift undone by a refusal soon after restores the measurement it
// dropped, with the acceptances of the lifted stretch counted: the
// window it measures spans them. Uncounted, 40 accepted in 2s, then 30
// more in 2.7s, were learned as 40 per 4.7s.
func TestShedUnliftCountsLiftedStretch(t *testing.T) {
	k := liftedKey(t)
	if k.s.learn.pending || !k.s.shed.lifted {
		t.Fatalf("not lifted")
	}
	for range 30 {
		l := k.grant()
		k.now += int64(90 * time.Millisecond)
		k.release(&l, shedOK)
	}
	y := k.grant()
	k.release(&y, shedRefused)
	if !k.s.learn.pending {
		t.Fatalf("the refusal soon after the lift restored no measurement")
	}
	k.now = max(k.now, k.s.pauseUntil)
	z := k.grant()
	k.release(&z, shedOK)
	q := k.s.learn.quota
	if q == nil || q.q < 71 {
		t.Fatalf("learned %+v; want the 71 accepted before the refusal (40, the probe and 30) counted", q)
	}
}

// A lift on a key whose server then states its quotas is retired at its
// first acceptance stating them: stated quotas pace the key, and no
// refusal later (a header that lies, a spent quota) restores the
// measurement the lift dropped. Before, the lift waited for 32
// acceptances a key that states quotas never counts, and a refusal an
// hour later taught the learner the 41 requests counted before the lift
// over the whole hour.
func TestShedLiftRetiredOnceStated(t *testing.T) {
	k := liftedKey(t)
	if !k.s.shed.lifted {
		t.Fatalf("not lifted")
	}
	stated := shedOK
	stated.Quotas = []parse.Quota{{Policy: "p", Limit: 10000, Window: time.Hour, Remaining: 9000, Reset: time.Hour}}
	l := k.grant()
	k.now += int64(50 * time.Millisecond)
	k.release(&l, stated)
	if k.s.shed.lifted {
		t.Errorf("an acceptance stating a quota left the lift: %+v", k.s.shed)
	}
	// A refusal the stated quota explains restores nothing either.
	spent := shedRefused
	spent.Quotas = []parse.Quota{{Policy: "p", Limit: 10000, Window: time.Hour, Remaining: 0, Reset: time.Hour}}
	k.s.shed.lifted, k.s.shed.epoch, k.s.shed.pendFrom, k.s.shed.pendQ = true, 1, instant(t0), 41 // as an old store may hold it
	k.s.shed.pendCycle = k.s.learn.cycle
	y := k.grant()
	k.release(&y, spent)
	if k.s.learn.pending {
		t.Errorf("a refusal its stated quota explains restored the dropped measurement")
	}
}

// A window held by a limit in flight grows by a request per window of
// answers at any width, and past rampCap means no limit, as an open
// ramp's does. Counted in whole thousandths, its step was nothing past a
// width of 1000.
func TestShedCappedGrowthGoesOn(t *testing.T) {
	r := ramp{open: true, cwnd: 1001, capped: true}
	for range 100000 {
		r.grow(false, false)
	}
	if r.cwnd == 1001 {
		t.Errorf("after 100000 answers a held window of 1001 is %d, still held %v", r.cwnd, r.capped)
	}
	r = ramp{open: true, cwnd: rampCap - 1, capped: true}
	for range 10000 {
		r.grow(false, false)
	}
	if r.cwnd != 0 || r.capped {
		t.Errorf("a held window past rampCap is %d, held %v; want no limit", r.cwnd, r.capped)
	}
}

// A window held to a limit in flight and grown back to it, refused at its
// edge with no more in flight than accepted requests had: a server that
// frees a slot only once its answer is sent refuses a request sent at
// once after an answer. The probe accepted, the key is held again to what
// the refused request was sent with. Before, the lift gave back the grown
// window, no longer held: it grew by a request an answer, the next
// refusal came soon after the lift, and the key paused and learned a
// rate (0.31 to 0.50 of ideal in one run of three of the scenario row
// "concurrency 4, stating nothing" with 100 workers).
func TestShedHeldWindowRefusedAtItsEdge(t *testing.T) {
	k := heldKey(t)
	// Three again, the third refused with two others in flight: no more
	// than most.
	x, y, z := k.grant(), k.grant(), k.grant()
	if plan := k.release(&z, shedRefused); plan.Pause != 0 || k.s.shed.seq == 0 {
		t.Fatalf("the refusal at the edge paused the key %v, or left no mark", plan.Pause)
	}
	k.now += int64(100 * time.Millisecond)
	k.release(&x, shedOK)
	k.release(&y, shedOK)
	k.answered(100 * time.Millisecond) // the probe
	if k.s.ramp.cwnd != 2 || !k.s.ramp.capped || k.s.learn.pending {
		t.Errorf("after the lift: window %d, held %v, measuring %v; want 2, held, not measuring", k.s.ramp.cwnd, k.s.ramp.capped, k.s.learn.pending)
	}
}

// A window held to a limit in flight, refused with a lone request in
// flight (a limit shared with other clients, or shed load) and lifted: it
// is held to one, and grows back as a cut window does.
func TestShedHeldWindowRefusedInside(t *testing.T) {
	k := heldKey(t)
	// Grown, still held, to 4 or more.
	for k.s.ramp.cwnd < 4 {
		k.round(0, 100*time.Millisecond)
	}
	k.round(0, 100*time.Millisecond)
	before := k.s.ramp.cwnd
	if !k.s.ramp.capped || k.s.shed.ok < shedRun {
		t.Fatalf("setup: window %d held %v, %d acceptances", before, k.s.ramp.capped, k.s.shed.ok)
	}
	// One request alone, refused (load shed): a mark, no pause.
	x := k.grant()
	if x.others != 0 {
		t.Fatalf("setup: %d others in flight", x.others)
	}
	k.now += int64(10 * time.Millisecond)
	if plan := k.release(&x, shedRefused); plan.Pause != 0 || k.s.shed.seq == 0 {
		t.Fatalf("setup: no mark (pause %v)", plan.Pause)
	}
	k.answered(100 * time.Millisecond) // the probe
	if k.s.learn.pending || k.s.shed.seq != 0 {
		t.Fatalf("setup: not lifted")
	}
	if k.s.ramp.cwnd != 1 || !k.s.ramp.capped {
		t.Fatalf("a lone request refused on a held window of %d, probe accepted: window %d, held %v; want 1, held", before, k.s.ramp.cwnd, k.s.ramp.capped)
	}
	// Held for 32 acceptances, then grown by a request a window of
	// answers: back to its width within 32 + 1 + 2 + ... answers.
	for range 60 {
		k.round(0, 100*time.Millisecond)
	}
	if k.s.ramp.cwnd < before || k.s.learn.pending || k.s.learn.quota != nil {
		t.Errorf("60 rounds after: window %d, measuring %v, learned %v; want %d or more, nothing measured", k.s.ramp.cwnd, k.s.learn.pending, k.s.learn.quota != nil, before)
	}
}

// heldKey returns a key held to two in flight by a limit in flight (three
// refused), grown back to three or more, with three in flight accepted
// twice since: most is two, and 32 acceptances or more came since the
// refusal.
func heldKey(t *testing.T) *shedKey {
	t.Helper()
	k := &shedKey{t: t, now: instant(t0)}
	// A probe; then pairs; then three, the third refused with two others
	// in flight, and its probe accepted: held to two.
	p := k.grant()
	k.now += int64(200 * time.Millisecond)
	k.release(&p, shedOK)
	for range 20 {
		a, b := k.grant(), k.grant()
		k.now += int64(100 * time.Millisecond)
		k.release(&a, shedOK)
		k.release(&b, shedOK)
	}
	a, b, c := k.grant(), k.grant(), k.grant()
	k.release(&c, shedRefused)
	k.now += int64(100 * time.Millisecond)
	k.release(&a, shedOK)
	k.release(&b, shedOK)
	k.answered(100 * time.Millisecond) // the probe
	if k.s.ramp.cwnd != 2 || !k.s.ramp.capped {
		t.Fatalf("after the first lift: window %d, held %v; want 2, held", k.s.ramp.cwnd, k.s.ramp.capped)
	}
	// Grown back past two, and three in flight accepted twice.
	for k.s.ramp.cwnd < 3 {
		k.round(0, 100*time.Millisecond)
	}
	for range 2 {
		ls := []Lease{k.grant(), k.grant(), k.grant()}
		k.now += int64(100 * time.Millisecond)
		for i := range ls {
			k.release(&ls[i], shedOK)
		}
	}
	if k.s.ramp.cwnd < 3 || k.s.shed.most != 2 || k.s.shed.ok < shedRun {
		t.Fatalf("window %d, most %d, %d acceptances; want 3 or more, 2, %d or more", k.s.ramp.cwnd, k.s.shed.most, k.s.shed.ok, shedRun)
	}
	return k
}

// A window held to a limit in flight, refused again: the probe waits until
// fewer are in flight than the refused request was sent with, and a bare
// refusal of the same flight, with no more in flight than most, keeps the
// mark, the window held to what it was sent with. Before, the probe went
// with most in flight, which may count an answer not yet read, and was
// refused; and the flight's second refusal ended the mark: either paused
// the key and measured a rate (0.22 and 0.46 of ideal in two runs of the
// scenario row "concurrency 4, stating nothing").
func TestShedHeldFlightAndProbe(t *testing.T) {
	k := heldKey(t)
	x, y, z := k.grant(), k.grant(), k.grant()
	k.release(&z, shedRefused)
	if _, h, ok := k.try(); ok || h.Reason != ReasonConcurrency {
		t.Fatalf("the probe went with two in flight, as many as the refused request was sent with (held %v)", h.Reason)
	}
	if plan := k.release(&y, shedRefused); plan.Pause != 0 || k.s.shed.seq == 0 {
		t.Fatalf("a second refusal of the flight paused the key %v, or ended the mark", plan.Pause)
	}
	k.now += int64(100 * time.Millisecond)
	k.release(&x, shedOK)
	k.answered(100 * time.Millisecond) // the probe
	if k.s.ramp.cwnd != 1 || !k.s.ramp.capped || k.s.learn.pending {
		t.Errorf("after the lift: window %d, held %v, measuring %v; want 1 (what the second refused request was sent with), held, not measuring", k.s.ramp.cwnd, k.s.ramp.capped, k.s.learn.pending)
	}
}

// A window held to a limit in flight and growing past it: a retry waits
// while the grant would go with more in flight than any two accepted
// requests had, and a first attempt takes the wider slot. A retry keeps
// its place in line, so each step of the window went to the longest
// waiting request, a retry: at the server's limit the same request was
// refused at every step, until its attempts were spent (the scenario
// row "concurrency 4, stating nothing" over 1,000 tasks: one task failed
// in one run of ten).
func TestShedRetryHeldFromEdge(t *testing.T) {
	k := heldKey(t)
	k.s.ramp.cwnd = 4 // grown by a request past the three that held
	ls := []Lease{k.grant(), k.grant(), k.grant()}
	retry := func() (Lease, Hold, bool) {
		var l Lease
		ask := Ask{After: at(k.now - int64(100*time.Millisecond)), AfterReason: ReasonBackoff}
		h, ok := k.s.acquireAt(k.now, &k.cfg, &ask, &l, false)
		return l, h, ok
	}
	if _, h, ok := retry(); ok || h.Reason != ReasonConcurrency {
		t.Fatalf("a retry took the fourth slot of a held window, past the three in flight accepted (held %v, ok %v)", h.Reason, ok)
	}
	// A refusal floor past its earliest start, it is held no more.
	if late := (Ask{After: at(k.now - int64(RefusalFloor))}); k.s.retryHeldFromEdge(k.now, &late) {
		t.Fatalf("a retry held past a refusal floor after its earliest start")
	}
	ls = append(ls, k.grant()) // a first attempt takes it
	k.now += int64(100 * time.Millisecond)
	for i := range ls {
		k.release(&ls[i], shedOK)
	}
	// One accepted with three others in flight: not yet two.
	if k.s.shed.most != 2 {
		t.Fatalf("most %d after one acceptance with three others; want 2", k.s.shed.most)
	}
	k.s.ramp.cwnd = 4 // as grown by its answers
	ls = []Lease{k.grant(), k.grant(), k.grant()}
	if _, _, ok := retry(); ok {
		t.Fatalf("a retry went with three in flight, accepted once only")
	}
	ls = append(ls, k.grant())
	k.now += int64(100 * time.Millisecond)
	for i := range ls {
		k.release(&ls[i], shedOK)
	}
	// Twice now: the fourth slot held, and a retry takes it.
	if k.s.shed.most != 3 {
		t.Fatalf("most %d after two acceptances with three others; want 3", k.s.shed.most)
	}
	k.s.ramp.cwnd = 4
	ls = []Lease{k.grant(), k.grant(), k.grant()}
	if _, h, ok := retry(); !ok {
		t.Errorf("a retry held (%v) with three in flight, accepted twice", h.Reason)
	}
	// Nor is a retry held by a window with room to spare: the workers
	// whose retries wait send nothing meanwhile, and the flight would not
	// grow to what the rule waits for.
	k.now += int64(100 * time.Millisecond)
	k.release(&ls[0], shedOK)
	k.release(&ls[1], shedOK)
	k.release(&ls[2], shedOK)
	k.s.shed.most, k.s.ramp.cwnd = 1, 8
	for range 3 {
		k.grant()
	}
	if _, h, ok := retry(); !ok {
		t.Errorf("a retry held (%v) with three in flight of a window of 8", h.Reason)
	}
	// For a window not held, a retry goes as any request.
	var s State
	s.ramp = ramp{open: true, cwnd: 4}
	s.shed.ok = shedRun
	if s.retryHeldFromEdge(k.now, &Ask{After: at(k.now)}) {
		t.Errorf("a retry held by a window not held to a limit in flight")
	}
}

// A window held to a limit in flight, grown a step past it and refused
// with more in flight than most: the step is undone, and the window held
// to what the refused request was sent with, not to one more than most,
// which may be a level short of the limit when the step came soon after
// the last level was reached.
func TestShedHeldWindowRefusedPastItsEdge(t *testing.T) {
	k := heldKey(t)        // most 2
	k.s.ramp.cwnd = 5      // grown two steps since
	ls := make([]Lease, 5) // four others in flight at the fifth's grant
	for i := range ls {
		ls[i] = k.grant()
	}
	if plan := k.release(&ls[4], shedRefused); plan.Pause != 0 || k.s.shed.seq == 0 || k.s.shed.sent != 4 {
		t.Fatalf("the refusal past the edge paused the key %v, or left no mark of four in flight (%+v)", plan.Pause, k.s.shed)
	}
	k.now += int64(100 * time.Millisecond)
	for i := range 4 {
		k.release(&ls[i], shedOK)
	}
	k.answered(100 * time.Millisecond) // the probe
	if k.s.ramp.cwnd != 4 || !k.s.ramp.capped {
		t.Errorf("after the lift: window %d, held %v; want 4 (what the refused request was sent with), held", k.s.ramp.cwnd, k.s.ramp.capped)
	}
}

// The held window's refusals in a row travel in a tail of their own,
// written only when there are some, and read only for a window held or
// marked as held.
func TestShedEdgeTail(t *testing.T) {
	s := State{seq: 9, epoch: 4}
	s.touch(instant(t0))
	s.ramp.capped = true
	plain, _ := s.MarshalBinary()
	s.ramp.edge, s.ramp.edgeAt = 3, 4
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) >= len(b) || !bytes.Equal(plain, b[:len(plain)]) {
		t.Fatalf("the form with the edge is not the one without it and a tail")
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil || back.ramp.edge != 3 || back.ramp.edgeAt != 4 || !back.ramp.capped {
		t.Errorf("edge 3 at 4 read back as %d at %d, held %v (%v)", back.ramp.edge, back.ramp.edgeAt, back.ramp.capped, err)
	}
	back = State{}
	if err := back.UnmarshalBinary(plain); err != nil || back.ramp.edge != 0 || back.ramp.edgeAt != 0 {
		t.Errorf("a form without the tail read back with edge %d (%v)", back.ramp.edge, err)
	}
	// Marked at a refusal of the held window: the ramp restarted, not
	// held until the lift, and the edge kept.
	m := State{seq: 9, epoch: 4}
	m.touch(instant(t0))
	m.shed = shed{seq: 7, epoch: 3, cwnd: 5, sent: 4, most: 2, top: 2, held: true}
	m.ramp.edge, m.ramp.edgeAt = maxEdge, 4
	mb, _ := m.MarshalBinary()
	back = State{}
	if err := back.UnmarshalBinary(mb); err != nil || back.ramp.edge != maxEdge || back.ramp.edgeAt != 4 {
		t.Errorf("a marked held window's edge read back as %d (%v)", back.ramp.edge, err)
	}
	tail := func(base []byte, edge, at uint64) []byte {
		e := encoder{base: s.born, b: append(bytes.Clone(base), tailEdge)}
		e.uint(edge)
		e.uint(at)
		return e.b
	}
	free := State{seq: 9, epoch: 4}
	free.touch(instant(t0))
	fb, _ := free.MarshalBinary()
	if err := new(State).UnmarshalBinary(tail(plain, 0, 4)); err != nil {
		t.Errorf("a first refusal's level, with no count yet, was not read back: %v", err)
	}
	for _, bad := range [][]byte{tail(plain, 1, 0), tail(plain, maxEdge+1, 4), tail(plain, 1, rampCap+1), tail(fb, 1, 4)} {
		if err := new(State).UnmarshalBinary(bad); err == nil {
			t.Errorf("a tail never written was read back: % x", bad[len(bad)-3:])
		}
	}
}

// A window held to a limit in flight that is refused a step past it again
// and again grows slower each time: a request per cwnd<<edge answers.
func TestShedEdgeSlowsGrowth(t *testing.T) {
	grown := func(edge uint8) int32 {
		r := ramp{open: true, cwnd: 4, capped: true, edge: edge}
		for range 64 { // 16 round trips of four answers
			r.grow(false, false)
		}
		return r.cwnd - 4
	}
	for _, c := range []struct {
		edge uint8
		want int32
	}{{0, 9}, {1, 6}, {2, 3}, {maxEdge, 0}} {
		if got := grown(c.edge); got < c.want-1 || got > c.want+1 {
			t.Errorf("edge %d: grew by %d in 64 answers from 4; want about %d", c.edge, got, c.want)
		}
	}
	k := heldKey(t)
	for i := range maxEdge + 2 {
		k.refusedPast(3, 5) // four in flight held, a step past
		// The first refusal a step past the window marks its level; each
		// after it at that level counts.
		if want := uint8(min(i, maxEdge)); k.s.ramp.edge != want || k.s.ramp.edgeAt != 4 || k.s.ramp.cwnd != 4 {
			t.Fatalf("after refusal %d of the held window: edge %d at %d, window %d; want %d at 4, 4", i+1, k.s.ramp.edge, k.s.ramp.edgeAt, k.s.ramp.cwnd, want)
		}
		for range shedRun {
			k.round(4, 100*time.Millisecond)
		}
	}
	// Refused a step past at a higher level (the window grew past where
	// it was refused: a limit raised, or load shed at random while the
	// window grew), the count starts over from there.
	k.refusedPast(5, 7)
	if k.s.ramp.edge != 0 || k.s.ramp.edgeAt != 6 {
		t.Errorf("refused a step past at a higher level: edge %d at %d; want 0 at 6", k.s.ramp.edge, k.s.ramp.edgeAt)
	}
	// A pause (a rate's refusal, say) starts the ramp over: not held,
	// and no edge.
	k.s.ramp.restart()
	if k.s.ramp.edge != 0 || k.s.ramp.edgeAt != 0 {
		t.Errorf("edge %d at %d after the ramp started over", k.s.ramp.edge, k.s.ramp.edgeAt)
	}
}

// A held window refused a step past it, then refused again (a held mark:
// the ramp restarted, its count kept), and the mark's probe accepted with
// an answer that states a quota: no lift, the ramp no longer held, and
// the count is dropped with the mark. Kept, the state was written with a
// tail its decoder refuses, and a Store that cannot read a key's state
// starts it over.
func TestShedEdgeEndsWithTheMark(t *testing.T) {
	k := heldKey(t)     // most 2
	k.refusedPast(3, 5) // a refusal a step past the window: edgeAt 4
	if k.s.ramp.edgeAt == 0 || !k.s.ramp.capped {
		t.Fatalf("setup: edge %d at %d held %v", k.s.ramp.edge, k.s.ramp.edgeAt, k.s.ramp.capped)
	}
	for range shedRun {
		k.round(4, 100*time.Millisecond)
	}
	// Refused again: a held mark.
	var ls []Lease
	for range 4 {
		ls = append(ls, k.grant())
	}
	k.release(&ls[3], shedRefused)
	if k.s.shed.seq == 0 || !k.s.shed.held || k.s.ramp.edgeAt == 0 {
		t.Fatalf("setup: no held mark with an edge: %+v, ramp %+v", k.s.shed, k.s.ramp)
	}
	k.now += int64(100 * time.Millisecond)
	for j := range 3 {
		k.release(&ls[j], shedOK)
	}
	// The probe's answer states a quota.
	p := k.grant()
	k.now += int64(100 * time.Millisecond)
	o := shedOK
	o.Quotas = []parse.Quota{{Policy: "a", Dialect: "ietf", Limit: 100, Window: time.Minute, Remaining: 50, Reset: 30 * time.Second}}
	k.release(&p, o)
	if k.s.ramp.capped || k.s.shed.held || k.s.ramp.edge != 0 || k.s.ramp.edgeAt != 0 {
		t.Errorf("after a probe that states a quota: held %v, mark held %v, edge %d at %d; want none", k.s.ramp.capped, k.s.shed.held, k.s.ramp.edge, k.s.ramp.edgeAt)
	}
	b, err := k.s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatalf("the state written does not read back: %v", err)
	}
}

// Two requests accepted with as many in flight as the one refused a step
// past the held window: the limit moved up (raised, or another client
// sharing it sends less), and the window grows at its pace again. Held
// slow, the window of a limit of four in flight raised to 64 at 100 ms
// was at 13 in flight 30 s after the raise.
func TestShedEdgeEndsWhenLimitRises(t *testing.T) {
	k := heldKey(t)
	k.s.ramp.cwnd, k.s.ramp.edge, k.s.ramp.edgeAt = 6, maxEdge, 4
	ls := make([]Lease, 6) // the fifth and sixth sent with four and five others
	for i := range ls {
		ls[i] = k.grant()
	}
	k.now += int64(100 * time.Millisecond)
	for i := range 5 {
		k.release(&ls[i], shedOK)
		if k.s.ramp.edge != maxEdge {
			t.Fatalf("edge %d after one acceptance with four others; want %d", k.s.ramp.edge, maxEdge)
		}
	}
	k.release(&ls[5], shedOK)
	if k.s.ramp.edge != 0 || k.s.ramp.edgeAt != 0 {
		t.Errorf("two accepted with four others or more, the level refused: edge %d at %d; want 0 at 0", k.s.ramp.edge, k.s.ramp.edgeAt)
	}
}

// refusedPast drives k through a refusal a step past its held window:
// with most and the window set, it grants the window full, the last
// request refused with one fewer others than the window, the others
// accepted a round trip later, and then the probe.
func (k *shedKey) refusedPast(most, cwnd int32) {
	k.t.Helper()
	k.s.shed.most, k.s.shed.top, k.s.ramp.cwnd = most, most, cwnd
	ls := make([]Lease, cwnd)
	for j := range ls {
		ls[j] = k.grant()
	}
	k.release(&ls[cwnd-1], shedRefused)
	k.now += int64(100 * time.Millisecond)
	for j := range ls[:cwnd-1] {
		k.release(&ls[j], shedOK)
	}
	k.answered(100 * time.Millisecond) // the probe
}
