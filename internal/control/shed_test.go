package control

import (
	"bytes"
	"testing"
	"time"
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
	// Refused, and a request sent after it accepted: lifted.
	xa, xb := grant()
	ya, yb := grant()
	now += int64(time.Millisecond)
	release(&xa, &xb, refused)
	if fast.shed.seq == 0 {
		t.Fatalf("no mark after a bare refusal that followed 40 acceptances")
	}
	release(&ya, &yb, accepted)
	if fast.shed.seq != 0 || fast.learn.pending || now < fast.pauseUntil {
		t.Fatalf("a request sent after the refused one, accepted, did not lift it: mark %+v, measuring %v", fast.shed, fast.learn.pending)
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
	s.shed = shed{seq: 7, epoch: 3, cwnd: 12, ok: 5}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil || back.shed != s.shed {
		t.Fatalf("the mark read back as %+v (%v), want %+v", back.shed, err, s.shed)
	}
	for _, bad := range []shed{{seq: 10, epoch: 3}, {seq: 7, epoch: 5}, {ok: shedRun + 1}, {cwnd: rampCap + 1, seq: 1}} {
		s.shed = bad
		b, _ := s.MarshalBinary()
		if err := back.UnmarshalBinary(b); err == nil {
			t.Errorf("a mark of %+v on a key of %d grants in epoch %d was read back", bad, s.seq, s.epoch)
		}
	}
	s.shed = shed{}
	b, _ = s.MarshalBinary()
	if err := back.UnmarshalBinary(append(b, tailShed, 0, 0, 0, 0)); err == nil {
		t.Errorf("an empty mark was read back")
	}
}
