package control

import (
	"testing"
	"time"
)

// BenchmarkAcquireRelease is the controller's share of a request to a key
// that states nothing.
func BenchmarkAcquireRelease(b *testing.B) {
	var s State
	cfg := Config{}
	now := t0
	out := Outcome{First: true, Bytes: 2}
	b.ReportAllocs()
	for b.Loop() {
		var l Lease
		if _, ok := s.Acquire(now, &cfg, Ask{}, &l); !ok {
			b.Fatal("held")
		}
		now = now.Add(time.Microsecond)
		s.Release(now, &cfg, &l, &out)
	}
}
