package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// Transient failures count in the run of failed flights that makes an
// outage: a flight once (the failures of requests granted before the last
// counted are of its flight), a RefusalFloor apart at least. In an
// outage, a failure that counts pauses the key, doubled with each flight,
// and a retry the budget cannot afford goes back to the caller; the
// flight's mark goes through the binary form, and an acceptance ends the
// outage.
func TestTransientOutage(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var s State
	cfg := Config{}
	grant := func(now time.Time) *Lease { return grantNow(t, &s, &cfg, now) }
	fail := func(now time.Time, l *Lease) Plan {
		return s.Release(now, &cfg, l, &gateway502)
	}
	// The key's probe accepted, then a flight granted together (as many
	// as its ramp lets go), failed together: one flight.
	s.Release(t0.Add(time.Millisecond), &cfg, grant(t0), &Outcome{First: true, Bytes: -1, Quotas: []parse.Quota{
		{Policy: "api", Unit: "requests", Limit: 1000, Remaining: 999, Window: time.Minute, Reset: time.Minute}}})
	var flight []*Lease
	for {
		var l Lease
		if _, ok := s.Acquire(t0.Add(2*time.Millisecond), &cfg, Ask{}, &l); !ok {
			break
		}
		flight = append(flight, &l)
	}
	if len(flight) < 2 {
		t.Fatalf("a flight of %d", len(flight))
	}
	for _, l := range flight {
		fail(t0.Add(10*time.Millisecond), l)
	}
	if s.retry.run != 1 {
		t.Fatalf("a flight of %d failed together counted %d flights, want 1", len(flight), s.retry.run)
	}
	// A request granted after it, failed within a second of it: not yet.
	fail(t0.Add(500*time.Millisecond), grant(t0.Add(400*time.Millisecond)))
	if s.retry.run != 1 {
		t.Fatalf("a failure 490ms after the flight's counted: run %d, want 1", s.retry.run)
	}
	// A flight a second: the outage after outageRun of them.
	now := t0.Add(time.Second)
	for s.retry.run < outageRun {
		now = now.Add(time.Second)
		fail(now.Add(time.Millisecond), grant(now))
		if paused, _ := s.Paused(now.Add(time.Millisecond)); s.retry.run < outageRun && !paused.IsZero() {
			t.Fatalf("run %d: the key paused until t0+%v before the outage", s.retry.run, paused.Sub(t0))
		}
	}
	// Each flight of the outage pauses the key: a second, then doubled,
	// spread by up to a quarter.
	var pauses []time.Duration
	for i := 0; ; i++ {
		at := now.Add(time.Millisecond)
		paused, why := s.Paused(at)
		if why != ReasonTransient {
			t.Fatalf("outage flight %d: the key paused for %v, want %v", i, why, ReasonTransient)
		}
		pauses = append(pauses, paused.Sub(at))
		if len(pauses) == 4 {
			break
		}
		now = paused
		fail(now.Add(time.Millisecond), grant(now))
	}
	for i, d := range pauses {
		lo, hi := RefusalFloor<<i*3/4, RefusalFloor<<i*5/4
		if d < lo || d > hi {
			t.Errorf("outage pause %d: %v, want within [%v, %v]", i, d, lo, hi)
		}
	}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if back.retry != s.retry || back.retry.failSeq == 0 || back.retry.failAt == 0 {
		t.Fatalf("decoded retry budget %+v, want %+v", back.retry, s.retry)
	}
	// An acceptance ends the outage.
	paused, _ := s.Paused(now.Add(time.Millisecond))
	s.Release(paused.Add(time.Millisecond), &cfg, grant(paused), &Outcome{First: true, Bytes: -1})
	if s.retry.outage() || s.retry.failSeq != 0 {
		t.Fatalf("after an acceptance: run %d, failSeq %d; want no outage, no mark (a key accepted since carries no tail for it)", s.retry.run, s.retry.failSeq)
	}
}

// A flight some of whose requests fail and others are refused counts
// once toward an outage, whichever answer comes first: counted by both,
// the flights of an origin behind a gateway that answers 502s and 429s
// in turn came twice as fast.
func TestTransientAndRefusedFlightCountsOnce(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, failFirst := range []bool{true, false} {
		var s State
		cfg := Config{}
		var probe Lease
		s.Acquire(t0, &cfg, Ask{}, &probe)
		s.Release(t0.Add(time.Millisecond), &cfg, &probe, &Outcome{First: true, Bytes: -1, Quotas: []parse.Quota{
			{Policy: "api", Unit: "requests", Limit: 1000, Remaining: 999, Window: time.Minute, Reset: time.Minute}}})
		a, b := grantNow(t, &s, &cfg, t0.Add(2*time.Millisecond)), grantNow(t, &s, &cfg, t0.Add(2*time.Millisecond))
		refused := Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
			Refusal: Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}}
		at := t0.Add(100 * time.Millisecond)
		if failFirst {
			s.Release(at, &cfg, a, &gateway502)
			s.Release(at.Add(10*time.Millisecond), &cfg, b, &refused)
		} else {
			s.Release(at, &cfg, a, &refused)
			s.Release(at.Add(10*time.Millisecond), &cfg, b, &gateway502)
		}
		if s.retry.run != 1 {
			t.Errorf("failed first %v: a flight of two, one failed and one refused, counted %d flights, want 1", failFirst, s.retry.run)
		}
	}
}

// grantNow acquires a lease of s at now, which must be granted.
func grantNow(t *testing.T, s *State, cfg *Config, now time.Time) *Lease {
	t.Helper()
	var l Lease
	if _, ok := s.Acquire(now, cfg, Ask{}, &l); !ok {
		t.Fatalf("held at %v", now)
	}
	return &l
}
