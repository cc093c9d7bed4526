package control

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// worst returns a State as large as the controller lets one grow: every
// policy slot taken with the longest names, every start log full, every
// lease slot counted, a learned quota.
func worst() *State {
	var s State
	now := instant(t0)
	s.touch(now)
	s.used, s.expiry, s.pauseUntil = now, now+int64(time.Hour), now+int64(time.Minute)
	s.gen, s.seq, s.epoch = 1<<60, 1<<60, 1<<60
	s.retry.failSeq, s.retry.failAt = 1<<60, now+int64(maxSpan)
	for i := range maxPolicies {
		p := policy{name: strings.Repeat(string(rune('a'+i)), maxKeyLen), pk: strings.Repeat("k", maxKeyLen), unit: unitRequests,
			seen: now, q: exactLog, w: int64(MaxPause), live: true, epoch: 1 << 60, mark: 1 << 60, minR: maxQuota, deadline: now + int64(maxSpan), cost: float64(maxCost),
			span: int64(maxSpan), opened: now + int64(maxSpan), first: firstVoid,
			lead: int64(resetGrain), stated: now + int64(maxSpan) + int64(resetGrain), skips: true, tested: true}
		p.log.ring = make([]start, maxLogLen) // as a decoded state may hold
		for j := range maxLogLen {
			p.log.push(start{at: now + int64(j)*int64(time.Hour), n: maxQuota}, maxQuota)
		}
		s.policies = append(s.policies, p)
	}
	q := s.policies[0]
	s.learn.quota = &q
	for i := range maxBuckets {
		s.leases.b = append(s.leases.b, bucket{end: now + int64(i+1)*int64(time.Hour), n: 1 << 40})
	}
	return &s
}

// withTurns adds to s every claim a key keeps (see turn.go).
func withTurns(s *State) *State {
	now := instant(t0)
	for i := range maxTurns {
		at := now - int64(maxSpan) + int64(i)
		s.turns.c = append(s.turns.c, claim{since: at, n: maxClaim, until: now + int64(maxSpan), reason: ReasonPace})
	}
	s.turns.held = true
	return s
}

// TestBinaryBounded checks that the largest State fits the bound that
// UnmarshalBinary accepts, and reads back.
func TestBinaryBounded(t *testing.T) {
	b, err := withTurns(worst()).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("worst-case state: %d bytes", len(b))
	if len(b) > maxBinary {
		t.Fatalf("worst-case state is %d bytes, want at most %d", len(b), maxBinary)
	}
	var s State
	if err := s.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary(worst) = %v", err)
	}
}

// FuzzUnmarshalBinary feeds any bytes to UnmarshalBinary. It must never
// panic; what it accepts must marshal to a form that reads back the same,
// and the controller must run on it without panicking and leave a State
// that still encodes.
func FuzzUnmarshalBinary(f *testing.F) {
	seed := func(s *State) {
		b, _ := s.MarshalBinary()
		f.Add(b, int64(0), uint8(0))
	}
	seed(worst())
	seed(withTurns(worst()))
	var s State
	cfg := Config{MaxRate: 5, MaxConcurrency: 3}
	var l Lease
	s.Acquire(t0, &cfg, Ask{}, &l)
	seed(&s)
	s.Release(t0.Add(time.Second), &cfg, &l, &Outcome{First: true, Quotas: []parse.Quota{{Policy: "a", Unit: "requests", Limit: 10, Window: time.Minute, Remaining: 0, Reset: time.Minute}}})
	seed(&s)
	f.Add([]byte{1, 0}, int64(5), uint8(1))
	f.Add([]byte{}, int64(-1), uint8(2))

	f.Fuzz(func(t *testing.T, data []byte, offset int64, op uint8) {
		var s State
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		b1, _ := s.MarshalBinary()
		var s2 State
		if err := s2.UnmarshalBinary(b1); err != nil {
			t.Fatalf("UnmarshalBinary(MarshalBinary(x)) = %v for an accepted x", err)
		}
		b2, _ := s2.MarshalBinary()
		if !bytes.Equal(b1, b2) {
			t.Fatalf("MarshalBinary is not stable:\n%x\n%x", b1, b2)
		}
		now := t0.Add(time.Duration(offset))
		cfg := Config{MaxRate: float64(op % 7), MaxConcurrency: int(op % 5), Lease: time.Duration(op) * time.Second}
		s.View(now)
		var l Lease
		s.Acquire(now, &cfg, Ask{Until: now.Add(time.Second)}, &l)
		out := Outcome{First: op&1 == 0, Refused: op&2 != 0 && op&8 == 0, Transient: op&8 != 0, Rand: uint64(offset),
			Quotas:  []parse.Quota{{Policy: "x", Unit: "requests", Limit: int64(op), Window: time.Second, Remaining: int64(op % 3), Reset: time.Duration(offset)}},
			Refusal: Refusal{Wait: time.Duration(offset), Given: op&4 != 0, Retryable: true, MaxWait: time.Minute, Violated: []string{"x"}},
		}
		s.Release(now.Add(time.Millisecond), &cfg, &l, &out)
		s.Acquire(now.Add(time.Hour), &cfg, Ask{}, new(Lease))
		b3, _ := s.MarshalBinary()
		var s3 State
		if err := s3.UnmarshalBinary(b3); err != nil {
			t.Fatalf("the controller left a State that does not read back: %v\n%x", err, b3)
		}
		if !reflect.DeepEqual(s.View(now), s3.View(now)) {
			t.Fatalf("View differs after a round trip")
		}
	})
}

// TestTypicalSize measures the binary form of typical states: a key that
// states nothing, and one that states a draft-11 policy, after a burst of
// requests.
func TestTypicalSize(t *testing.T) {
	tests := []struct {
		name   string
		quotas []parse.Quota
		most   int
	}{
		{"states nothing", nil, 105}, // 98 before the open ramp kept its last answer (ramp.stallAt)
		{"q=100;w=60, r and t", []parse.Quota{{Policy: "default", Unit: "requests", Limit: 100, Window: time.Minute, Remaining: 50, Reset: 30 * time.Second}}, 300},
		{"two policies, 20 starts each", []parse.Quota{
			{Policy: "burst", Unit: "requests", Limit: 20, Window: time.Second, Remaining: 5, Reset: time.Second},
			{Policy: "day", Unit: "requests", Limit: 10000, Window: 24 * time.Hour, Remaining: 9000, Reset: time.Hour},
		}, 400},
	}
	for _, tt := range tests {
		var s State
		cfg := Config{}
		now := t0
		for i := range 20 {
			var l Lease
			if _, ok := s.Acquire(now, &cfg, Ask{Until: now.Add(30 * time.Second)}, &l); ok {
				s.Release(now.Add(80*time.Millisecond), &cfg, &l, &Outcome{First: true, Quotas: tt.quotas, Bytes: -1, Rand: uint64(i)})
			}
			now = now.Add(100 * time.Millisecond)
		}
		b, _ := s.MarshalBinary()
		t.Logf("%s: %d bytes", tt.name, len(b))
		if len(b) > tt.most {
			t.Errorf("%s: %d bytes, want at most %d", tt.name, len(b), tt.most)
		}
	}
}
