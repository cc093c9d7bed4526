package control_test

import (
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// A Store that went back to older data (a failover that lost the last
// write) or ran its function on an older copy hands the release of a
// request to a state that never saw its grant: the lease's sequence number
// is past the state's. Released as the state's own, a bare refusal after
// 32 acceptances or more copied it into the shed mark, and MarshalBinary
// wrote a state UnmarshalBinary rejects ("invalid key state"): a Store
// that returns the decode error failed every later Update of the key. The
// lease is read as one of an earlier incarnation, and the state reads
// back.
func TestReleaseOfGrantStateLost(t *testing.T) {
	for accepted := 0; accepted < 40; accepted++ {
		t0 := time.Now()
		cfg := &control.Config{}
		var s control.State
		at := t0
		for range accepted {
			var l control.Lease
			if _, ok := s.Acquire(at, cfg, control.Ask{}, &l); !ok {
				t.Fatalf("accepted %d: held", accepted)
			}
			s.Release(at.Add(10*time.Millisecond), cfg, &l, &control.Outcome{})
			at = at.Add(20 * time.Millisecond)
		}
		old, _ := s.MarshalBinary()
		var l control.Lease
		if _, ok := s.Acquire(at, cfg, control.Ask{}, &l); !ok {
			t.Logf("accepted %d: held", accepted)
			continue
		}
		var r control.State
		if err := r.UnmarshalBinary(old); err != nil {
			t.Fatal(err)
		}
		r.Release(at.Add(10*time.Millisecond), cfg, &l, &control.Outcome{Refused: true, First: true, Refusal: control.Refusal{Backoff: 4 * time.Second, Retryable: true}})
		b, err := r.MarshalBinary()
		var back control.State
		if err == nil {
			err = back.UnmarshalBinary(b)
		}
		if err != nil {
			t.Errorf("accepted %d, then a grant the state lost, refused bare: %v", accepted, err)
		}
	}
}
