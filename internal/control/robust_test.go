package control

import (
	"fmt"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// TestMemoryBoundedWhateverTheServerSends answers every request of a key
// with 20 policies of huge quotas, distinct names of 1 KiB, partition
// keys, huge resets and refusals, for 4000 requests: the key keeps
// 8 policies at most, names of 128 bytes, start logs of what pacing needs,
// and its binary form stays within the bound UnmarshalBinary accepts.
func TestMemoryBoundedWhateverTheServerSends(t *testing.T) {
	var s State
	cfg := Config{}
	now := t0
	most := 0
	for i := range 4000 {
		var l Lease
		if _, ok := s.Acquire(now, &cfg, Ask{}, &l); ok {
			qs := make([]parse.Quota, 20)
			for j := range qs {
				name := fmt.Sprintf("%04d-%d-%s", j, i%3, string(make([]byte, 1024)))
				qs[j] = parse.Quota{Policy: name, Partition: make([]byte, 1024), Unit: "requests",
					Limit: 1 << 60, Window: time.Duration(1+j) * time.Second, Remaining: 1 << 59, Reset: time.Duration(1<<62 + j)}
			}
			s.Release(now, &cfg, &l, &Outcome{First: true, Quotas: qs, Bytes: -1, Refused: i%97 == 0, Rand: uint64(i),
				Refusal: Refusal{Wait: time.Millisecond, Given: true, Reason: ReasonRetryAfter, Retryable: true, MaxWait: time.Minute}})
		}
		if len(s.policies) > maxPolicies {
			t.Fatalf("%d policies, want at most %d", len(s.policies), maxPolicies)
		}
		if i%500 == 0 {
			b, _ := s.MarshalBinary()
			most = max(most, len(b))
		}
		now = now.Add(180 * time.Millisecond)
	}
	for _, p := range s.policies {
		if len(p.name) > maxKeyLen || len(p.pk) > maxKeyLen {
			t.Errorf("policy name of %d bytes, partition of %d, want at most %d", len(p.name), len(p.pk), maxKeyLen)
		}
	}
	b, _ := s.MarshalBinary()
	most = max(most, len(b))
	t.Logf("largest binary form: %d bytes", most)
	if most > maxBinary {
		t.Errorf("binary form of %d bytes, want at most %d", most, maxBinary)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Errorf("UnmarshalBinary: %v", err)
	}
}

// TestRestoredStrideZeroStepsTheWindow restores a learned quota whose rate
// stride reads back as 0 (a KeyState may hold one): the rate step taken at
// the next refusal shortens the learned window by half at most, never to
// nothing, and the key stays paced.
func TestRestoredStrideZeroStepsTheWindow(t *testing.T) {
	var s State
	var cfg Config
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	run := func(d time.Duration, refused bool) {
		t.Helper()
		var l Lease
		if _, ok := s.Acquire(at(d), &cfg, Ask{}, &l); !ok {
			t.Fatalf("held at %v", d)
		}
		out := Outcome{First: true, Bytes: -1}
		if refused {
			out.Refused, out.Refusal = true, Refusal{Backoff: 4 * time.Second, Retryable: true, MaxWait: time.Hour}
		}
		s.Release(at(d), &cfg, &l, &out)
	}
	// 2 per 3s, measured between a probe refused at 2s and the
	// acceptance at 3s: the next refusal takes a rate step.
	run(0, false)
	run(0, false)
	run(0, true)
	run(time.Second, true)
	run(2*time.Second, true)
	run(3*time.Second, false)
	if q := s.learn.quota; q == nil || q.q != 2 || q.w != int64(3*time.Second) || !s.learn.quick {
		t.Fatalf("learned %+v quick %v, want 2 per 3s and a rate step due", q, s.learn.quick)
	}
	s.learn.stride, s.learn.floor = 0, 0
	b, _ := s.MarshalBinary()
	s = State{}
	if err := s.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	run(3*time.Second, true)
	if w := time.Duration(s.learn.quota.w); w != 1500*time.Millisecond {
		t.Errorf("learned window after the step = %v, want 1.5s (half of 3s, at most)", w)
	}
	n := 0
	for range 50 {
		var l Lease
		if _, ok := s.Acquire(at(3*time.Second+time.Millisecond), &cfg, Ask{}, &l); ok {
			n++
		}
	}
	if n > 2 {
		t.Errorf("%d of 50 granted at once after the step, want 2 at most", n)
	}
}
