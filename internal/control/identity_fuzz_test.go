package control

import (
	"testing"
	"time"
)

// FuzzIdentity feeds any bytes to Identity and Stamp, which read the
// header of forms no store may have written (a notification's, a key's in
// Redis). They must never panic nor read past data, and on every form
// UnmarshalBinary accepts they must give the identity (and Stamp the
// generation and grants) of the State decoded.
func FuzzIdentity(f *testing.F) {
	var s State
	cfg := &Config{MaxConcurrency: 1, Lease: time.Minute}
	s.Acquire(time.Unix(1_800_000_000, 0), cfg, Ask{}, new(Lease))
	b, _ := s.MarshalBinary()
	f.Add(b)
	for n := 1; n < len(b); n++ {
		f.Add(b[:n])
	}
	f.Add([]byte{binaryVersion, 0, 2})
	f.Add([]byte{binaryVersionCosts, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		got := Identity(data[:len(data):len(data)])
		if got < 0 || got > maxStored {
			t.Fatalf("Identity(%x) = %d, out of the bounds of an identity", data, got)
		}
		var s State
		gen, born, seq, ok := Stamp(data[:len(data):len(data)])
		if s.UnmarshalBinary(data) != nil || len(data) == 0 {
			return
		}
		if got != s.born {
			t.Fatalf("Identity(%x) = %d, the State it decodes to has born %d", data, got, s.born)
		}
		if !ok || gen != s.gen || born != s.born || seq != s.seq {
			t.Fatalf("Stamp(%x) = %d, %d, %d, %v; the State it decodes to has generation %d, born %d, grants %d", data, gen, born, seq, ok, s.gen, s.born, s.seq)
		}
	})
}
