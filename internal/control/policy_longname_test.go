package control

import (
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// Names were cut at maxKeyLen: two per-route quotas of one size whose
// names differ only past their first 128 bytes were one policy, and what
// one had left was lost (6 granted at once with 2 left stated).
func TestLongNamesOfOneSizeKeptApart(t *testing.T) {
	d := &hostile{t: t}
	prefix := strings.Repeat("r", maxKeyLen)
	stated := func(name string, r int64) parse.Quota {
		return parse.Quota{Policy: prefix + name, Unit: "requests", Limit: 100, Window: time.Minute, Remaining: r, Reset: 50 * time.Second, Dialect: "ietf"}
	}
	answer := func(at time.Duration, qs ...parse.Quota) {
		l, _, ok := d.acq(at, Ask{}, Cost{})
		if !ok {
			t.Fatalf("request at %v held", at)
		}
		d.rel(at+100*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Quotas: qs})
	}
	answer(0, stated("/a", 2), stated("/b", 90))
	answer(200*time.Millisecond, stated("/b", 89))
	if n := len(d.s.policies); n != 2 {
		t.Fatalf("%d policies for 2 stated", n)
	}
	for i := range d.s.policies {
		if n := len(d.s.policies[i].name); n > maxKeyLen {
			t.Errorf("a name of %d bytes kept, want at most %d", n, maxKeyLen)
		}
	}
	n := 0
	for ; n < 50; n++ {
		if _, _, ok := d.acq(400*time.Millisecond, Ask{}, Cost{}); !ok {
			break
		}
	}
	if n > 2 {
		t.Errorf("%d granted at once with /a stating 2 left", n)
	}
	b, err := d.s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
}
