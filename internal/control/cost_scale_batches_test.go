package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A server counting twice what was declared had taught the key a scale
// of 1000 thousandths; asked by batches of 4 granted at once, each
// answered in order, the first answer of each batch (its own request
// counted) was compared with what the four reserved, read as the server
// counting half, and the scale fell to 0 in six batches. Such a sample is
// a bound below the truth, and raises the scale only.
func TestScaleKeptByBatches(t *testing.T) {
	var s State
	cfg := Config{}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	level := int64(1_000_000) // the server's; no time passes
	q := func(r int64) []parse.Quota {
		return []parse.Quota{{Unit: "tokens", Limit: 1_000_000, Remaining: r, Reset: 10 * time.Minute, Window: 10 * time.Minute, Dialect: "ietf"}}
	}
	grant := func(name string) *Lease {
		l := new(Lease)
		l.SetCost(Cost{Tokens: 1000})
		if h, ok := s.Acquire(now, &cfg, Ask{}, l); !ok {
			t.Fatalf("%s held: %v until +%v", name, h.Reason, h.Until().Sub(now))
		}
		return l
	}
	answer := func(l *Lease) {
		level -= 2000 // the server counts twice what was declared
		s.Release(now, &cfg, l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: q(level)})
	}
	for range 30 {
		answer(grant("sequential"))
	}
	learned := s.costs.units[0].scale
	t.Logf("scale after 30 sequential requests: %d", learned)
	for round := range 6 {
		var batch []*Lease
		for range 4 {
			batch = append(batch, grant("batch"))
		}
		for _, l := range batch {
			answer(l)
		}
		t.Logf("after batch %d: scale %d", round+1, s.costs.units[0].scale)
	}
	if sc := s.costs.units[0].scale; sc < learned*3/4 {
		t.Errorf("scale %d after batches of a server counting twice what is declared, learned %d sequentially", sc, learned)
	}
}

// A scale learned too high comes down by batches too: once the server
// counts what was declared, the first answer of each batch, compared
// with its own request's reservation alone (the others in flight left
// out), is a bound above the truth below the scale.
func TestScaleLoweredByBatches(t *testing.T) {
	var s State
	cfg := Config{}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	level := int64(1_000_000)
	q := func(r int64) []parse.Quota {
		return []parse.Quota{{Unit: "tokens", Limit: 1_000_000, Remaining: r, Reset: 10 * time.Minute, Window: 10 * time.Minute, Dialect: "ietf"}}
	}
	grant := func() *Lease {
		l := new(Lease)
		l.SetCost(Cost{Tokens: 1000})
		if h, ok := s.Acquire(now, &cfg, Ask{}, l); !ok {
			t.Fatalf("held: %v until +%v", h.Reason, h.Until().Sub(now))
		}
		return l
	}
	answer := func(l *Lease, counted int64) {
		level -= counted
		s.Release(now, &cfg, l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: q(level)})
	}
	for range 30 {
		answer(grant(), 2000)
	}
	learned := s.costs.units[0].scale
	for range 12 {
		var batch []*Lease
		for range 4 {
			batch = append(batch, grant())
		}
		for _, l := range batch {
			answer(l, 1000) // now what was declared
		}
	}
	if sc := s.costs.units[0].scale; sc > learned/4 {
		t.Errorf("scale %d after 12 batches of a server counting what was declared, %d learned before", sc, learned)
	}
}
