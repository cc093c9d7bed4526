package control

import (
	"testing"
	"time"
)

// A state forgotten with a request in flight stays the same incarnation,
// its grants counted on. Its learner started over, its cycles counted
// from zero again, while the lease in flight kept the cycle it was
// granted in, of the learner before. That request's acceptance, answered
// once a refusal of the fresh state began a measurement, was read as an
// acceptance after the refusal (a cycle past the one refused): the
// measurement ended, and a quota of one request per a few milliseconds
// was learned from an answer to a request sent before the refusal, before
// the Forget even. The cycles go on past the lease's now.
func TestForgetOldAnswerEndsNoMeasurement(t *testing.T) {
	cfg := Config{}
	var s State
	ms := time.Millisecond
	bare := func(at time.Time, l *Lease) {
		s.Release(at, &cfg, l, &Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
			Refusal: Refusal{Backoff: time.Second}})
	}
	ok := func(at time.Time, l *Lease) {
		s.Release(at, &cfg, l, &Outcome{First: true, Bytes: -1})
	}

	// The state before the Forget: a probe, a refusal that pauses the
	// key, and the probe after the pause, which is its second cycle.
	var p1, a, p2 Lease
	if _, g := s.Acquire(t0, &cfg, Ask{}, &p1); !g {
		t.Fatal("setup: first request held")
	}
	ok(t0.Add(ms), &p1)
	if _, g := s.Acquire(t0.Add(10*ms), &cfg, Ask{}, &a); !g {
		t.Fatal("setup: second request held")
	}
	bare(t0.Add(20*ms), &a)
	later := t0.Add(time.Minute)
	if _, g := s.Acquire(later, &cfg, Ask{}, &p2); !g {
		t.Fatal("setup: the probe after the pause held")
	}
	if p2.cycle < 2 {
		t.Fatalf("setup: the probe after the pause is of cycle %d, want 2 or more", p2.cycle)
	}

	// Forgotten with p2 in flight.
	s.Forget(later.Add(ms), &cfg)

	// The fresh state: a probe accepted, then a request refused with
	// nothing foreseen: a measurement begins, in cycle 1.
	var n1, n2 Lease
	if _, g := s.Acquire(later.Add(2*ms), &cfg, Ask{}, &n1); !g {
		t.Fatal("setup: the forgotten key's first request held")
	}
	ok(later.Add(3*ms), &n1)
	if _, g := s.Acquire(later.Add(4*ms), &cfg, Ask{}, &n2); !g {
		t.Fatal("setup: the forgotten key's second request held")
	}
	bare(later.Add(5*ms), &n2)
	if !s.learn.pending {
		t.Fatalf("setup: the refusal of the fresh state began no measurement")
	}

	// The old probe, sent before the Forget, accepted now: no sign that
	// the window refused has ended.
	ok(later.Add(10*ms), &p2)
	if !s.learn.pending || s.learn.quota != nil {
		q := "none"
		if s.learn.quota != nil {
			q = time.Duration(s.learn.quota.w).String()
		}
		t.Errorf("an answer to a request sent before the Forget (cycle %d) ended the fresh state's measurement (cycle %d): pending %v, learned window %s",
			p2.cycle, s.learn.pendCycle, s.learn.pending, q)
	}
}
