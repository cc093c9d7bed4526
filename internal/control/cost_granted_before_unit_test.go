package control

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A request granted before any answer stated a unit its cost names
// reserved nothing in it: reserve knew only the units of the quotas
// stated. The answer that first stated the unit counted the requests
// granted before its own, not those granted after it and still in
// flight, and those were neither counted nor reserved. Here A and then B
// (5000 tokens each) are granted to an OpenAI-shaped key of 12,000 tokens
// a minute that has stated nothing of its tokens; A's answer states 7000
// left, written before B arrived; C (5000) went against the 7000, where
// B had left 2000, and the server refused it. Now B's cost is reserved
// from its grant, and C waits for the 3000 it lacks (15 s at 200 a
// second), in memory and through the binary form a Store keeps.
func TestCostGrantedBeforeUnitKnown(t *testing.T) {
	requests := []parse.Quota{{Unit: "requests", Limit: 500, Remaining: 499, Reset: 120 * time.Millisecond, Dialect: "openai"}}
	tokens := func(left int64) []parse.Quota { // 200 a second
		return append(slices.Clone(requests), parse.Quota{Unit: "tokens", Limit: 12000, Remaining: left, Reset: time.Duration(12000-left) * time.Second / 200, Dialect: "openai"})
	}
	points := func(left int64) []parse.Quota { // restored whole each minute
		return []parse.Quota{{Policy: "p", Unit: "points", Limit: 120, Window: time.Minute, Remaining: left, Reset: time.Minute, Dialect: "ietf"}}
	}
	const acquire, release = 'a', 'r'
	type step struct {
		at     time.Duration // after t0
		op     byte          // acquire the lease, or release it with an answer stating quotas
		lease  string
		cost   Cost
		quotas []parse.Quota
		held   Reason // for an acquire: ReasonNone when granted
	}
	tok, pts := Cost{Tokens: 5000}, Cost{Unit: "points", Amount: 50}
	for _, tc := range []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{"tokens, the requests quota stated first", Config{}, []step{
			{0, acquire, "P", Cost{}, nil, ReasonNone},
			{0, release, "P", Cost{}, requests, ReasonNone},
			{time.Second, acquire, "A", tok, nil, ReasonNone},
			{time.Second, acquire, "B", tok, nil, ReasonNone},
			{1100 * time.Millisecond, release, "A", tok, tokens(7000), ReasonNone},
			{1100 * time.Millisecond, acquire, "C", tok, nil, ReasonQuota}, // 2000 left once B is counted
			{16 * time.Second, acquire, "C", tok, nil, ReasonQuota},
			{16200 * time.Millisecond, acquire, "C", tok, nil, ReasonNone}, // 3000 more in 15 s
		}},
		{"tokens, nothing stated first", Config{}, []step{
			{0, acquire, "P", Cost{}, nil, ReasonNone},
			{300 * time.Millisecond, release, "P", Cost{}, nil, ReasonNone}, // a slow answer: the ramp opens to four in flight
			{time.Second, acquire, "A", tok, nil, ReasonNone},
			{time.Second, acquire, "B", tok, nil, ReasonNone},
			{1100 * time.Millisecond, release, "A", tok, tokens(7000), ReasonNone},
			{1100 * time.Millisecond, acquire, "C", tok, nil, ReasonQuota},
			{16200 * time.Millisecond, acquire, "C", tok, nil, ReasonNone},
		}},
		{"B answered first", Config{}, []step{
			{0, acquire, "P", Cost{}, nil, ReasonNone},
			{0, release, "P", Cost{}, requests, ReasonNone},
			{time.Second, acquire, "A", tok, nil, ReasonNone},
			{time.Second, acquire, "B", tok, nil, ReasonNone},
			{1100 * time.Millisecond, release, "B", tok, tokens(2000), ReasonNone}, // counts A and B
			{1200 * time.Millisecond, release, "A", tok, tokens(7000), ReasonNone}, // older: the lower level stands
			{1200 * time.Millisecond, acquire, "C", tok, nil, ReasonQuota},
			{16200 * time.Millisecond, acquire, "C", tok, nil, ReasonNone},
		}},
		{"B's lease ended", Config{Lease: 5 * time.Second}, []step{
			{0, acquire, "P", Cost{}, nil, ReasonNone},
			{0, release, "P", Cost{}, requests, ReasonNone},
			{time.Second, acquire, "A", tok, nil, ReasonNone},
			{time.Second, acquire, "B", tok, nil, ReasonNone},
			{7 * time.Second, release, "A", tok, tokens(7000), ReasonNone},
			{7 * time.Second, acquire, "C", tok, nil, ReasonNone}, // B's reservation ended with its lease
		}},
		{"points, a quota restored whole", Config{}, []step{
			{0, acquire, "P", Cost{}, nil, ReasonNone},
			{0, release, "P", Cost{}, requests, ReasonNone},
			{time.Second, acquire, "A", pts, nil, ReasonNone},
			{time.Second, acquire, "B", pts, nil, ReasonNone},
			{1100 * time.Millisecond, release, "A", pts, points(70), ReasonNone},
			{1100 * time.Millisecond, acquire, "C", pts, nil, ReasonQuota}, // 20 left once B is counted
			{61100 * time.Millisecond, acquire, "C", pts, nil, ReasonNone}, // the next window
		}},
	} {
		for _, stored := range []bool{false, true} {
			name := tc.name
			if stored {
				name += ", through the binary form"
			}
			t.Run(name, func(t *testing.T) {
				var s State
				leases := map[string]*Lease{}
				for i, st := range tc.steps {
					if stored {
						b, err := s.MarshalBinary()
						if err != nil {
							t.Fatal(err)
						}
						s = State{}
						if err := s.UnmarshalBinary(b); err != nil {
							t.Fatalf("step %d: UnmarshalBinary = %v", i, err)
						}
						if b2, _ := s.MarshalBinary(); !bytes.Equal(b, b2) {
							t.Fatalf("step %d: the binary form did not read back", i)
						}
					}
					now := t0.Add(st.at)
					if st.op == release {
						s.Release(now, &tc.cfg, leases[st.lease], &Outcome{First: true, Served: true, Bytes: -1, Quotas: st.quotas})
						continue
					}
					l := new(Lease)
					l.SetCost(st.cost)
					h, ok := s.Acquire(now, &tc.cfg, Ask{}, l)
					if ok {
						leases[st.lease] = l
					}
					if why := h.Reason; ok && st.held != ReasonNone || !ok && why != st.held {
						t.Fatalf("step %d: Acquire of %s (%+v) at +%v: granted %v, held for %v; want held for %v (none: granted); policies %+v",
							i, st.lease, st.cost, st.at, ok, why, st.held, s.View(now).Policies)
					}
				}
			})
		}
	}
}

// TestBinaryEarlyTail checks that what requests in flight reserve in units
// no answer has stated is written and read back, within the bound of the
// form at worst (three units known, four not), and that an empty tail, a
// unit the state knows, one named twice, one with nothing reserved, or one
// that is no cost unit is rejected.
func TestBinaryEarlyTail(t *testing.T) {
	w := worstCosts()
	w.costs.units = w.costs.units[:maxCostUnits-1] // none is early once every unit is known
	for i := range w.costs.quotas {
		w.costs.quotas[i].unit %= maxCostUnits - 1
	}
	for i := range maxCostUnits {
		u := costUnit{name: strings.Repeat(string(rune('q'+i)), maxKeyLen)}
		for j := range maxReservations {
			seq := uint64(1<<60 + 2*j + 1)
			u.add(reservation{lo: seq, hi: seq + 1, end: instant(t0) + int64(j+1)*int64(time.Hour), n: maxQuota})
		}
		w.costs.early = append(w.costs.early, u)
	}
	if b, err := w.MarshalBinary(); err != nil || len(b) > maxBinary {
		t.Fatalf("worst-case state with early reservations: %d bytes (%v), want at most %d", len(b), err, maxBinary)
	} else if err := new(State).UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary(worst with early reservations) = %v", err)
	} else {
		t.Logf("worst-case state with early reservations: %d bytes", len(b))
	}

	s := worst()
	s.retry.failSeq, s.retry.failAt = 0, 0 // no later tail: those below are appended
	s.costs.units = []costUnit{{name: "tokens"}}
	s.costs.early = []costUnit{{name: "points", n: 7, res: []reservation{{lo: 3, hi: 3, end: instant(t0), n: 7}}}}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil || !slices.EqualFunc(back.costs.early, s.costs.early, func(a, b costUnit) bool {
		return a.name == b.name && a.n == b.n && slices.Equal(a.res, b.res)
	}) {
		t.Fatalf("read back as %+v (%v), want %+v", back.costs.early, err, s.costs.early)
	}
	s.costs.early = nil
	plain, _ := s.MarshalBinary()
	if len(plain) >= len(b) || plain[len(plain)-1] == tailEarly {
		t.Errorf("a state of no early reservation is written with its tail (%d bytes, %d with it)", len(plain), len(b))
	}
	res := append(encodeAt(instant(t0), s.born), 7) // one reservation: grant 3, ending at t0, of 7
	unit := func(name string) []byte {
		return append(append([]byte{byte(len(name))}, name...), append([]byte{1, 3, 0}, res...)...)
	}
	for name, tail := range map[string][]byte{
		"empty":       {tailEarly, 0},
		"known":       append([]byte{tailEarly, 1}, unit("tokens")...),
		"twice":       append(append([]byte{tailEarly, 2}, unit("points")...), unit("points")...),
		"no reserved": {tailEarly, 1, 6, 'p', 'o', 'i', 'n', 't', 's', 0},
		"requests":    append([]byte{tailEarly, 1}, unit("requests")...),
		"cut":         append([]byte{tailEarly, 1}, unit("points")[:5]...),
	} {
		if err := new(State).UnmarshalBinary(append(bytes.Clone(plain), tail...)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := new(State).UnmarshalBinary(append(bytes.Clone(plain), append([]byte{tailEarly, 1}, unit("points")...)...)); err != nil {
		t.Errorf("a tail as written: %v", err)
	}
}

// encodeAt returns the binary form of the instant t in a state born at
// base.
func encodeAt(t, base int64) []byte {
	e := encoder{base: base}
	e.at(t)
	return e.b
}
