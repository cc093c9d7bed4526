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

// A start log whose 128 starts all left the window, read again and again
// with no start added (the key held by something else): wait drops them
// once. Skipping them at each read instead cost about 180 ns a read.
func BenchmarkWaitStaleLog(b *testing.B) {
	const q, w = 128, int64(time.Second)
	var l startLog
	base := int64(1e18)
	for i := range int64(q) {
		l.add(base+i, q, w, 1)
	}
	now := base + 10*w
	b.ReportAllocs()
	for b.Loop() {
		if d := l.wait(now, q, w); d != 0 {
			b.Fatal(d)
		}
	}
}

// Two quotas: A (128/s) took 128 starts a while ago, B (1 per hour) holds
// every request, and each Acquire reads A's log.
func BenchmarkAcquireHeldByOther(b *testing.B) {
	const w = int64(time.Second)
	var s State
	cfg := Config{}
	base := instant(t0)
	s.policies = []policy{{name: "a", unit: unitRequests, q: 128, w: w}, {name: "b", unit: unitRequests, q: 1, w: int64(time.Hour)}}
	for i := range int64(128) {
		s.policies[0].log.add(base+i, 128, w, 1)
	}
	s.policies[1].log.add(base, 1, int64(time.Hour), 1)
	now := t0.Add(10 * time.Second)
	b.ReportAllocs()
	for b.Loop() {
		var l Lease
		if _, ok := s.Acquire(now, &cfg, Ask{}, &l); ok {
			b.Fatal("granted")
		}
	}
}
