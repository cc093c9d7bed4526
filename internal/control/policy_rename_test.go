package control

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// An answer stating one of two policies of the same quota and window
// renamed the other to its name (renamed was tried before the lookup by
// name), so that the other's observation of 2 left was lost: 6 requests
// were granted at once. A name the key has is its own policy's (DESIGN.md
// §3: a policy named afresh is "a name not stated before").
func TestAnswerStatingOnePolicyKeepsTheOther(t *testing.T) {
	d := &hostile{t: t}
	if n := oneOfTwoStated(t, d, "a", "b"); n > 2 {
		t.Errorf("%d granted at once with a stating 2 left", n)
	}
}

// oneOfTwoStated has d's key answer a request stating policies a (2 left)
// and b (90 left) of one quota and window, then one stating b alone. It
// checks that the key keeps two policies, and returns how many requests
// it then grants at once (at most 50).
func oneOfTwoStated(t *testing.T, d *hostile, a, b string) int {
	t.Helper()
	stated := func(name string, r int64) parse.Quota {
		return parse.Quota{Policy: name, Unit: "requests", Limit: 100, Window: time.Minute, Remaining: r, Reset: 50 * time.Second, Dialect: "ietf"}
	}
	answer := func(at time.Duration, qs ...parse.Quota) {
		l, _, ok := d.acq(at, Ask{}, Cost{})
		if !ok {
			t.Fatalf("request at %v held", at)
		}
		d.rel(at+100*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Quotas: qs})
	}
	answer(0, stated(a, 2), stated(b, 90))
	answer(200*time.Millisecond, stated(b, 89))
	if p := d.s.policies; len(p) != 2 || p[0].name == p[1].name {
		t.Errorf("%d policies after an answer stating %q alone, want two of two names", len(p), b)
	}
	n := 0
	for ; n < 50; n++ {
		if _, _, ok := d.acq(400*time.Millisecond, Ask{}, Cost{}); !ok {
			break
		}
	}
	return n
}

// A content-bytes policy's expected cost was kept up to maxQuota while
// UnmarshalBinary accepts maxCost: after one 4 GiB response the state's
// own binary form did not read back (a Store then starts the key over).
func TestContentBytesCostRoundTrip(t *testing.T) {
	d := &hostile{t: t}
	l, _, ok := d.acq(0, Ask{}, Cost{})
	if !ok {
		t.Fatal("held")
	}
	d.rel(time.Second, &l, Outcome{First: true, Bytes: 4 << 30, Quotas: []parse.Quota{
		{Policy: "bytes", Unit: "content-bytes", Limit: 1 << 40, Window: time.Hour, Remaining: 1 << 39, Reset: time.Hour, Dialect: "ietf"},
	}})
	b, err := d.s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary(MarshalBinary()) after a 4 GiB response: %v", err)
	}
}

// Two per-route policies of one quota and window, "a" and "b", each
// answer stating its own only: the first answer stating "b" renames "a"
// (b was not stated before), but an answer stating "a" again renamed "b"
// back, and the next stating "b" renamed "a" again, each answer losing
// what the other policy had left: after a at 1 left then b at 88 left, 7
// were granted at once (the ramp's bound; up to 88 without it). A name a
// policy was renamed from is a name stated before (DESIGN.md §3).
func TestNameStatedBeforeDoesNotRenameAgain(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := "one process"
		if shared {
			name = "through the binary form" // as a Store keeps it
		}
		t.Run(name, func(t *testing.T) {
			d := &hostile{t: t}
			stated := func(name string, r int64) parse.Quota {
				return parse.Quota{Policy: name, Unit: "requests", Limit: 100, Window: time.Minute, Remaining: r, Reset: 50 * time.Second, Dialect: "ietf"}
			}
			answer := func(at time.Duration, q parse.Quota) {
				l, h, ok := d.acq(at, Ask{}, Cost{})
				if !ok {
					t.Fatalf("request at %v held: %+v", at, h)
				}
				d.rel(at+100*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Served: true, Quotas: []parse.Quota{q}})
				if shared {
					b, err := d.s.MarshalBinary()
					if err != nil {
						t.Fatal(err)
					}
					d.s = State{}
					if err := d.s.UnmarshalBinary(b); err != nil {
						t.Fatalf("UnmarshalBinary = %v", err)
					}
				}
			}
			answer(0, stated("a", 2))
			answer(200*time.Millisecond, stated("b", 89)) // b not stated before: renames a
			answer(400*time.Millisecond, stated("a", 1))  // a was stated before
			answer(600*time.Millisecond, stated("b", 88)) // b was stated before
			names := []string{}
			for _, p := range d.s.policies {
				names = append(names, p.name)
			}
			n := 0
			for ; n < 50; n++ {
				if _, _, ok := d.acq(800*time.Millisecond, Ask{}, Cost{}); !ok {
					break
				}
			}
			if n > 1 {
				t.Errorf("policies %q after a, b, a, b stated in turn; %d granted at once, want at most 1 (a said 1 left)", names, n)
			}
		})
	}
}

// A server that puts its window's number in its policy's name renames it
// on every answer, and the names policies were renamed from are kept to
// maxFormer, the oldest overwritten first, in the binary form as in
// memory; a form that repeats one, or states none, is rejected.
func TestFormerNamesBounded(t *testing.T) {
	d := &hostile{t: t}
	for i := range 3 * maxFormer {
		l, h, ok := d.acq(time.Duration(i)*time.Second, Ask{}, Cost{})
		if !ok {
			t.Fatalf("request %d held: %+v", i, h)
		}
		q := parse.Quota{Policy: fmt.Sprintf("w%d", i), Unit: "requests", Limit: 100, Window: time.Minute, Remaining: 99 - int64(i), Reset: time.Minute - time.Duration(i)*time.Second, Dialect: "ietf"}
		d.rel(time.Duration(i)*time.Second+time.Millisecond, &l, Outcome{First: true, Bytes: -1, Served: true, Quotas: []parse.Quota{q}})
		if len(d.s.policies) != 1 {
			t.Fatalf("%d policies after %q, want it renamed", len(d.s.policies), q.Policy)
		}
	}
	f := d.s.former
	if f.len() != maxFormer {
		t.Errorf("%d names kept, want %d", f.len(), maxFormer)
	}
	for i := range 3 * maxFormer {
		kept := i >= 2*maxFormer-1 && i < 3*maxFormer-1 // the last maxFormer renamed from
		if got := f.has(nameHash(fmt.Sprintf("w%d", i), nil, unitRequests)); got != kept {
			t.Errorf("name w%d kept %v, want %v", i, got, kept)
		}
	}
	b, err := d.s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary = %v", err)
	}
	if got, want := oldestFirst(back.former), oldestFirst(f); !slices.Equal(got, want) {
		t.Errorf("read back as %v, want %v", got, want)
	}
	// The tail is the form's last: a count of 2 with one hash twice, and
	// a count of 0, are rejected.
	plain, _ := worst().MarshalBinary()
	for _, tail := range [][]byte{{tailFormer, 2, 5, 5}, {tailFormer, 0}} {
		var s State
		if err := s.UnmarshalBinary(append(slices.Clip(plain), tail...)); err == nil {
			t.Errorf("a tail %v read back as %v", tail, s.former)
		}
	}
}

// oldestFirst returns the hashes f keeps, the oldest first.
func oldestFirst(f former) []uint64 {
	out := make([]uint64, f.len())
	for i := range out {
		out[i] = f.oldest(i)
	}
	return out
}
