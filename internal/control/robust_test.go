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
