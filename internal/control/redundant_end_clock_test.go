package control

import (
	"fmt"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// TestNinthPolicyKeepsSpentQuota: eight policies bind; the first,
// 100 per minute, has 3 left until its reset in a minute. A ninth, 1 per
// second, makes it redundant by q per w (1·60 ≤ 100), yet says nothing
// of what the server has left of the minute: replaced, its live r was
// dropped, and the answers that followed (r=2, 1, 0) were ignored. A
// policy whose live observation has fewer left than the ninth allows in
// its window is not replaced.
func TestNinthPolicyKeepsSpentQuota(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var qs []parse.Quota
	qs = append(qs, parse.Quota{Policy: "minute", Unit: "requests", Limit: 100, Remaining: 3,
		Window: time.Minute, Reset: time.Minute, Dialect: "ietf"})
	for k := range 7 {
		qs = append(qs, parse.Quota{Policy: fmt.Sprintf("o%d", k), Partition: []byte("other"), Unit: "requests", Limit: 1000000, Remaining: 999999,
			Window: time.Duration(k+2) * time.Second, Reset: time.Second, Dialect: "ietf"})
	}
	qs = append(qs, parse.Quota{Policy: "second", Unit: "requests", Limit: 1, Remaining: 1,
		Window: time.Second, Reset: time.Second, Dialect: "ietf"})

	var s State
	cfg := Config{}
	var l Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &l); !ok {
		t.Fatal("first request held")
	}
	s.Release(t0, &cfg, &l, &Outcome{First: true, Bytes: -1, Served: true, Quotas: qs})

	granted := 0
	now := t0.Add(2 * time.Second)
	for range 20 {
		l = Lease{}
		if _, ok := s.Acquire(now, &cfg, Ask{}, &l); ok {
			granted++
			left := max(3-1-granted, 0) // the server counts each start against the minute
			qs[0].Remaining = int64(left)
			qs[0].Reset = t0.Add(time.Minute).Sub(now)
			s.Release(now, &cfg, &l, &Outcome{First: true, Bytes: -1, Served: true, Quotas: qs})
		}
		now = now.Add(1100 * time.Millisecond)
	}
	if granted > 3 {
		var names []string
		for i := range s.policies {
			names = append(names, s.policies[i].name)
		}
		t.Errorf("the minute had 3 left (r=3, then 2, 1, 0 as answered; reset in 60s); %d requests started in the next 24s; policies kept %v", granted, names)
	}
}

// TestClockBackKeepsLeasesInFlight: MaxConcurrency 1, one request
// in flight; the wall clock steps back two days. Bounding the whole state
// from the new now, as a Store's is, dropped every lease ending beyond
// now+MaxPause -- the one in flight, whose request was still running --
// and a second request started beside it. Only the pause and the live
// windows are capped now.
func TestClockBackKeepsLeasesInFlight(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cfg := Config{MaxConcurrency: 1}
	var s State
	var l Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &l); !ok {
		t.Fatal("first request held")
	}
	s.Release(t0, &cfg, &l, &Outcome{First: true, Bytes: -1, Served: true})
	var inflight Lease
	if _, ok := s.Acquire(t0.Add(time.Second), &cfg, Ask{}, &inflight); !ok {
		t.Fatal("second request held")
	}
	back := t0.Add(-48 * time.Hour)
	var l2 Lease
	if h, ok := s.Acquire(back, &cfg, Ask{}, &l2); ok {
		t.Errorf("after a 48h step back, a request started beside one in flight under MaxConcurrency 1 (in flight now: %d)", s.leases.n)
	} else if h.Reason != ReasonConcurrency {
		t.Logf("held for %v", h.Reason)
	}
}

// TestEndUnkeptFreesItsOwnLease: A and B are granted in the
// same lease slot. B's Release with Keep is applied (its body streams); A's
// failed at the Store, so A ends with EndUnkept. Removing a kept lease of
// the slot first, it removed B's (the slot's leases are counts) and left
// A's unanswered one counted; B's End then freed nothing, and one request
// stayed in flight until the Lease expired. EndUnkept removes a lease not
// kept first.
func TestEndUnkeptFreesItsOwnLease(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cfg := Config{MaxConcurrency: 4}
	var s State
	var w Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &w); !ok {
		t.Fatal("first request held")
	}
	s.Release(t0, &cfg, &w, &Outcome{First: true, Bytes: -1, Served: true})
	now := t0.Add(time.Millisecond)
	var a, b Lease
	if _, ok := s.Acquire(now, &cfg, Ask{}, &b); !ok {
		t.Fatal("B held")
	}
	// B answered, its body streams: kept.
	s.Release(now, &cfg, &b, &Outcome{First: true, Bytes: -1, Served: true, Keep: true})
	if _, ok := s.Acquire(now, &cfg, Ask{}, &a); !ok {
		t.Fatal("A held")
	}
	if a.end != b.end {
		t.Fatalf("A and B in different slots: %d %d", a.end, b.end)
	}
	// A's Release with Keep failed at the Store: not applied. Its body ends.
	s.EndUnkept(now.Add(time.Millisecond), &cfg, &a)
	s.End(now.Add(2*time.Millisecond), &cfg, &b)
	if s.leases.n != 0 || s.leases.awaiting() != 0 {
		t.Errorf("after A and B both ended: %d in flight, %d awaiting an answer; want 0 (held until the lease expires at %v)",
			s.leases.n, s.leases.awaiting(), time.Duration(a.end-Instant(now)))
	}
}
