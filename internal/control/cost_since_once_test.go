package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A request granted after the observation M, but before M's answer came,
// had its reservation dropped from since by that answer (since started
// over). Its own answer, stating nothing, took its cost off since again,
// from the reservations of the requests granted after it: the next
// sample read the server as counting twice what was declared, and the
// scale rose (to 250 thousandths), though the server counted exactly what
// was declared. Only a request granted since since started over leaves
// it now.
func TestBareAnswerLeavesSinceOnce(t *testing.T) {
	var s State
	cfg := Config{}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	q := func(r int64) []parse.Quota {
		return []parse.Quota{{Unit: "tokens", Limit: 60000, Remaining: r, Reset: time.Duration(60000-r) * time.Millisecond, Dialect: "openai"}}
	}
	level := int64(30000) // the server's; no time passes, so no refill
	var p Lease
	if _, ok := s.Acquire(now, &cfg, Ask{}, &p); !ok {
		t.Fatal("probe not granted")
	}
	s.Release(now, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: q(level)})

	grant := func(name string, tokens int64) *Lease {
		l := new(Lease)
		l.SetCost(Cost{InputTokens: tokens})
		if h, ok := s.Acquire(now, &cfg, Ask{}, l); !ok {
			t.Fatalf("%s held: %v until +%v", name, h.Reason, h.Until().Sub(now))
		}
		return l
	}
	m := grant("m", 1000)
	a := grant("a", 1000) // granted after m, in flight when m's answer comes
	level -= 1000         // the server counts m
	s.Release(now, &cfg, m, &Outcome{First: true, Bytes: -1, Quotas: q(level)})
	b := grant("b", 2000)
	level -= 1000 // the server counts a; its answer states nothing
	s.Release(now, &cfg, a, &Outcome{First: true, Bytes: -1})
	level -= 2000 // the server counts b, exactly as declared
	s.Release(now, &cfg, b, &Outcome{First: true, Bytes: -1, Quotas: q(level)})

	if sc := s.costs.units[0].scale; sc != 0 {
		t.Errorf("scale %d after answers that counted exactly what was declared, want 0", sc)
	}
}
