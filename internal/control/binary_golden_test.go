package control

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"reflect"
	"testing"
	"time"
)

// TestBinaryGoldenForms checks that forms written before the learner's
// tail existed still decode, with its fields zero, and are written back
// unchanged. Each was written by MarshalBinary before the tail existed:
// "learned" is a key that learned 2 per 1s from a bare refusal (version
// 1), "costs" the same key one token quota later (version 2).
func TestBinaryGoldenForms(t *testing.T) {
	for _, c := range []struct{ name, form string }{
		{"learned", "01048080d0bccfafe1e33181e8a1e6fd2281a8d6b90700040181a8d6b9070400000001020000000000020181a8d6b9070100000102010100000100028094ebdc03000000000000000000000000000180a8d6b907010081a8d6b9070000006866666666660e4081a8d6b90700000001000000000000000002000000"},
		{"costs", "02058080d0bccfafe1e33181b8ced98c2381d0acf30e02050181a8d6b907040000000104000000000100000181f882ad16f40300010105f30300000000000000000000020181a8d6b9070200000102010100000100028094ebdc03000000000000000000000000000180d0acf30e010081a8d6b907000000000000000000204081f882ad16000000c0b2cd3b000000000000000002000000000106746f6b656e730500010000000381f882ad16e1d403008dedb5a0f7c6b03ef7cc0381f882ad1681a0d9e61d05"},
	} {
		b, err := hex.DecodeString(c.form)
		if err != nil {
			t.Fatal(err)
		}
		var s State
		if err := s.UnmarshalBinary(b); err != nil {
			t.Fatalf("%s: UnmarshalBinary = %v", c.name, err)
		}
		if q := s.learn.quota; q == nil || q.q != 2 || q.w != int64(time.Second) {
			t.Errorf("%s: learned quota %+v, want 2 per 1s", c.name, q)
		}
		l := &s.learn
		if l.revertSeq != 0 || l.burst != 0 || l.smooth != 0 || l.smoothAt != 0 || l.cut != 0 {
			t.Errorf("%s: the learner's tail is not zero: %+v", c.name, *l)
		}
		back, _ := s.MarshalBinary()
		if !bytes.Equal(back, b) {
			t.Errorf("%s: written back as\n%x\nwant\n%x", c.name, back, b)
		}
	}
}

// TestBinaryTails checks that a set tail is written and read back, and
// that an empty, unknown or repeated tail is rejected.
func TestBinaryTails(t *testing.T) {
	s := worst()
	s.learn.revertSeq, s.learn.burst = 7, 20
	s.learn.cycle, s.learn.smooth, s.learn.smoothAt = 9, smoothOn, 5
	s.learn.cut = 6
	b, _ := s.MarshalBinary()
	var back State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary = %v", err)
	}
	if l := back.learn; l.revertSeq != 7 || l.burst != 20 || l.smooth != smoothOn || l.smoothAt != 5 || l.cut != 6 {
		t.Errorf("tail read back as %+v", l)
	}
	// Each tail alone.
	only := worst()
	only.learn.cycle, only.learn.smooth, only.learn.smoothAt = 3, smoothNo, 1
	ob, _ := only.MarshalBinary()
	back = State{}
	if err := back.UnmarshalBinary(ob); err != nil {
		t.Fatalf("UnmarshalBinary(even pace alone) = %v", err)
	}
	if l := back.learn; l.revertSeq != 0 || l.burst != 0 || l.smooth != smoothNo || l.smoothAt != 1 {
		t.Errorf("even pace's tail alone read back as %+v", l)
	}
	// The learner's bound on the window it measures, and its quick step.
	lo := worst()
	lo.learn.lo, lo.learn.quick = int64(2*time.Second), true
	lb, _ := lo.MarshalBinary()
	back = State{}
	if err := back.UnmarshalBinary(lb); err != nil {
		t.Fatalf("UnmarshalBinary(lower bound) = %v", err)
	}
	if l := back.learn; l.lo != int64(2*time.Second) || !l.quick {
		t.Errorf("lower bound's tail read back as lo %d, quick %v", l.lo, l.quick)
	}
	// The learner's rate: its last cut, an acceptance since, a rate
	// step held. A form without this tail reads them as zero.
	rt := worst()
	rt.learn.cutSeq, rt.learn.cutOK, rt.learn.rated = rt.seq, true, true
	rb, _ := rt.MarshalBinary()
	back = State{}
	if err := back.UnmarshalBinary(rb); err != nil {
		t.Fatalf("UnmarshalBinary(rate) = %v", err)
	}
	if l := back.learn; l.cutSeq != rt.seq || !l.cutOK || !l.rated {
		t.Errorf("rate's tail read back as cut %d, ok %v, rated %v", l.cutSeq, l.cutOK, l.rated)
	}
	back = State{}
	if err := back.UnmarshalBinary(lb); err != nil || back.learn.cutSeq != 0 || back.learn.cutOK || back.learn.rated {
		t.Errorf("a form without the rate's tail read back as cut %d, ok %v, rated %v (%v)", back.learn.cutSeq, back.learn.cutOK, back.learn.rated, err)
	}
	// The window the learner's last measurement ended with. A form
	// without this tail reads it as zero.
	mt := worst()
	mt.learn.measured = int64(3 * time.Second)
	mb, _ := mt.MarshalBinary()
	back = State{}
	if err := back.UnmarshalBinary(mb); err != nil || back.learn.measured != mt.learn.measured {
		t.Errorf("window's tail read back as %d (%v)", back.learn.measured, err)
	}
	back = State{}
	if err := back.UnmarshalBinary(rb); err != nil || back.learn.measured != 0 {
		t.Errorf("a form without the window's tail read back as %d (%v)", back.learn.measured, err)
	}
	// The window a measurement measured beyond the doubling it took. A
	// form without this tail reads it as zero; one with it and no
	// learned quota is rejected.
	ct := worst()
	ct.learn.capped = int64(5 * time.Minute)
	cb, _ := ct.MarshalBinary()
	back = State{}
	if err := back.UnmarshalBinary(cb); err != nil || back.learn.capped != ct.learn.capped {
		t.Errorf("capped window's tail read back as %d (%v)", back.learn.capped, err)
	}
	back = State{}
	if err := back.UnmarshalBinary(mb); err != nil || back.learn.capped != 0 {
		t.Errorf("a form without the capped window's tail read back as %d (%v)", back.learn.capped, err)
	}
	ht := worst()
	ht.learn.capped = int64(MaxPause) + 1 // beyond any learned window
	if hb, _ := ht.MarshalBinary(); (&State{}).UnmarshalBinary(hb) == nil && ht.learn.quota != nil {
		t.Errorf("a capped window's tail beyond MaxPause was accepted")
	}
	if ct.learn.quota != nil {
		nq := ct
		nq.learn.quota = nil
		nqb, _ := nq.MarshalBinary()
		if err := (&State{}).UnmarshalBinary(nqb); err == nil {
			t.Errorf("a capped window's tail with no learned quota was accepted")
		}
	}
	plain, _ := worst().MarshalBinary()
	// The claims of requests held (see turn.go), oldest first. A form
	// without this tail reads none.
	tt := worst()
	base := tt.born
	tt.turns = turns{c: []claim{
		{since: base + 1, n: 2, until: base + int64(time.Second), reason: ReasonPace},
		{since: base + 5, n: 1, until: base + int64(2*time.Second), reason: ReasonQuota},
	}, held: true}
	tb, _ := tt.MarshalBinary()
	back = State{}
	if err := back.UnmarshalBinary(tb); err != nil || !reflect.DeepEqual(back.turns, tt.turns) {
		t.Errorf("turns' tail read back as %+v (%v), want %+v", back.turns, err, tt.turns)
	}
	back = State{}
	if err := back.UnmarshalBinary(mb); err != nil || len(back.turns.c) != 0 || back.turns.held {
		t.Errorf("a form without the turns' tail read back as %+v (%v)", back.turns, err)
	}
	// The answers of the cycle before, accepted once the next began (see
	// learner.grow). A form without this tail reads none.
	pt := worst()
	pt.learn.prevOK = 7
	pb, _ := pt.MarshalBinary()
	back = State{}
	if err := back.UnmarshalBinary(pb); err != nil || back.learn.prevOK != 7 {
		t.Errorf("the cycle before's tail read back as %d (%v), want 7", back.learn.prevOK, err)
	}
	back = State{}
	if err := back.UnmarshalBinary(plain); err != nil || back.learn.prevOK != 0 {
		t.Errorf("a form without the cycle before's tail read back as %d (%v)", back.learn.prevOK, err)
	}
	// The learned quota's latest start, at its instant (see
	// learner.wait). A form without this tail reads none.
	ls := worst()
	ls.learn.lastStart = base + 12345
	lsb, _ := ls.MarshalBinary()
	back = State{}
	if err := back.UnmarshalBinary(lsb); err != nil || back.learn.lastStart != base+12345 {
		t.Errorf("the latest start's tail read back as %d (%v), want %d", back.learn.lastStart, err, base+12345)
	}
	back = State{}
	if err := back.UnmarshalBinary(plain); err != nil || back.learn.lastStart != 0 {
		t.Errorf("a form without the latest start's tail read back as %d (%v)", back.learn.lastStart, err)
	}
	claimAt := func(since, n, until int64, why Reason) []byte {
		e := encoder{base: base}
		e.at(since)
		e.uint(uint64(n))
		e.at(until)
		return append(e.b, byte(why))
	}
	turnsOf := func(claims ...[]byte) []byte {
		form := append(bytes.Clone(plain), tailTurn, byte(len(claims)))
		for _, c := range claims {
			form = append(form, c...)
		}
		return append(form, 0)
	}
	for name, form := range map[string][]byte{
		"empty turns":                    append(bytes.Clone(plain), tailTurn, 0, 0),
		"turns out of order":             turnsOf(claimAt(base+5, 1, base+10, ReasonPace), claimAt(base+1, 1, base+10, ReasonPace)),
		"turns at one instant twice":     turnsOf(claimAt(base+5, 1, base+10, ReasonPace), claimAt(base+5, 1, base+10, ReasonPace)),
		"a turn of no request":           turnsOf(claimAt(base+5, 0, base+10, ReasonPace)),
		"a turn ending before it":        turnsOf(claimAt(base+5, 1, base+4, ReasonPace)),
		"a turn for an unknown cause":    turnsOf(claimAt(base+5, 1, base+10, numReasons)),
		"a turn of no instant":           turnsOf(claimAt(0, 1, base+10, ReasonPace)),
		"empty tail":                     append(bytes.Clone(plain), tailLearn, 0, 0),
		"empty even pace":                append(bytes.Clone(plain), tailSmooth, 0, 0),
		"unknown even pace":              append(bytes.Clone(plain), tailSmooth, smoothMax+1, 0),
		"even pace from a cycle to come": append(bytes.Clone(plain), append([]byte{tailSmooth, smoothOn}, binary.AppendUvarint(nil, s.learn.cycle+1)...)...),
		"even pace before learn":         append(bytes.Clone(ob), tailLearn, 1, 1),
		"unknown tail":                   append(bytes.Clone(plain), tailStart+1, 1),
		"empty last start":               append(bytes.Clone(plain), tailStart, 0),
		"empty cycle before":             append(bytes.Clone(plain), tailPrev, 0),
		"cycle before before turns":      append(bytes.Clone(pb), tailTurn, 0, 1),
		"empty cut":                      append(bytes.Clone(plain), tailCut, 0),
		"repeated tail":                  append(bytes.Clone(b), b[len(plain):]...),
		"cut tail":                       b[:len(b)-1],
		"empty lower bound":              append(bytes.Clone(plain), tailLo, 0, 0),
		"lower bound's flag not a bool":  append(bytes.Clone(plain), tailLo, 1, 2),
		"lower bound before cut":         append(bytes.Clone(lb), tailCut, 1),
		"empty rate":                     append(bytes.Clone(plain), tailRate, 0, 0, 0),
		"rate's flag not a bool":         append(bytes.Clone(plain), tailRate, 0, 2, 0),
		"rate cut at a grant to come":    append(bytes.Clone(plain), append(append([]byte{tailRate}, binary.AppendUvarint(nil, s.seq+1)...), 0, 0)...),
		"rate before lower bound":        append(bytes.Clone(rb), tailLo, 1, 0),
		"empty window":                   append(bytes.Clone(plain), tailWindow, 0),
		"window beyond the longest span": append(append([]byte{}, plain...), append([]byte{tailWindow}, binary.AppendUvarint(nil, uint64(maxSpan)+1)...)...),
		"window before rate":             append(bytes.Clone(mb), tailRate, 0, 1, 0),
	} {
		if err := new(State).UnmarshalBinary(form); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestIdentity checks that Identity reads a form's identity, that of the
// state it was written from, and 0 from the zero State's form and from
// data that is no form.
func TestIdentity(t *testing.T) {
	var s State
	cfg := &Config{MaxConcurrency: 1, Lease: time.Minute}
	now := time.Unix(1_800_000_000, 0)
	s.Acquire(now, cfg, Ask{}, new(Lease))
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Identity(b), s.born; got != want || want == 0 {
		t.Errorf("Identity = %d, want %d", got, want)
	}
	next := s
	next.Forget(now.Add(2*time.Minute), cfg) // its lease over
	nb, _ := next.MarshalBinary()
	if Identity(nb) == Identity(b) || Identity(nb) == 0 {
		t.Errorf("a state forgotten and started over has identity %d, the one before %d", Identity(nb), Identity(b))
	}
	held := s
	held.Forget(now.Add(time.Second), cfg) // its request still in flight
	hb, _ := held.MarshalBinary()
	if Identity(hb) != Identity(b) {
		t.Errorf("a state forgotten with a request in flight has identity %d, the one before %d: the request's end would free nothing", Identity(hb), Identity(b))
	}
	for _, d := range [][]byte{nil, {}, {9, 1, 2}, {binaryVersion}, {binaryVersion, 1}, {binaryVersion, 1, 1}} {
		if got := Identity(d); got != 0 {
			t.Errorf("Identity(%x) = %d, want 0", d, got)
		}
	}
}

// A form MarshalBinary never writes is rejected: a varint padded with a
// last byte of zero (the Generation, 1, written "0x81 0x00"), which read
// back to a form of other bytes, and a policy twice.
func TestBinaryRejectsFormsNeverWritten(t *testing.T) {
	b, _ := hex.DecodeString("01048080d0bccfafe1e33181e8a1e6fd2281a8d6b90700040181a8d6b9070400000001020000000000020181a8d6b9070100000102010100000100028094ebdc03000000000000000000000000000180a8d6b907010081a8d6b9070000006866666666660e4081a8d6b90700000001000000000000000002000000")
	var s State
	if err := s.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if s.gen >= 0x80 {
		t.Fatalf("generation %d: not one byte", s.gen)
	}
	padded := append([]byte{b[0], b[1] | 0x80, 0}, b[2:]...)
	if err := new(State).UnmarshalBinary(padded); err == nil {
		t.Errorf("UnmarshalBinary accepted a padded varint: %x", padded)
	}
	twice := worst()
	twice.policies[1].name, twice.policies[1].pk, twice.policies[1].unit = twice.policies[0].name, twice.policies[0].pk, twice.policies[0].unit
	f, err := twice.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := new(State).UnmarshalBinary(f); err == nil {
		t.Errorf("UnmarshalBinary accepted a form with a policy twice")
	}
}
