package control

import (
	"strings"
	"testing"
)

// Names were cut at maxKeyLen: two per-route quotas of one size whose
// names differ only past their first 128 bytes were one policy, and what
// one had left was lost (6 granted at once with 2 left stated).
func TestLongNamesOfOneSizeKeptApart(t *testing.T) {
	d := &hostile{t: t}
	prefix := strings.Repeat("r", maxKeyLen)
	if n := oneOfTwoStated(t, d, prefix+"/a", prefix+"/b"); n > 2 {
		t.Errorf("%d granted at once with /a stating 2 left", n)
	}
	for i := range d.s.policies {
		if n := len(d.s.policies[i].name); n > maxKeyLen {
			t.Errorf("a name of %d bytes kept, want at most %d", n, maxKeyLen)
		}
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
