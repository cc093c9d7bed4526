package control

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// worstCosts returns worst() with every cost unit and quota taken, the
// longest names, and every reservation slot counted.
func worstCosts() *State {
	s := worst()
	now := instant(t0)
	for i := range maxCostUnits {
		u := costUnit{name: strings.Repeat(string(rune('m'+i)), maxKeyLen), mark: 1 << 60, scale: maxScale, since: maxQuota, fixed: maxQuota, fits: maxQuota, from: 1 << 60}
		for j := range maxReservations {
			seq := uint64(1<<60 + 2*j + 1)
			u.res = append(u.res, reservation{lo: seq, hi: seq + 1, end: now + int64(j+1)*int64(time.Hour), n: maxQuota})
			u.n += maxQuota
		}
		s.costs.units = append(s.costs.units, u)
	}
	for i := range maxCostQuotas {
		s.costs.quotas = append(s.costs.quotas, costQuota{
			name: strings.Repeat(string(rune('a'+i)), maxKeyLen), pk: strings.Repeat("k", maxKeyLen), unit: uint8(i % maxCostUnits),
			refill: i%2 == 0, seen: now, q: maxQuota, w: int64(MaxPause), rate: maxRate, live: true, r: maxQuota, at: now,
			deadline: now + int64(maxSpan), mark: 1 << 60,
		})
	}
	return s
}

func TestBinaryBoundedCosts(t *testing.T) {
	b, err := worstCosts().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("worst-case state with cost quotas: %d bytes", len(b))
	if len(b) > maxBinary {
		t.Fatalf("worst-case state is %d bytes, want at most %d", len(b), maxBinary)
	}
	var s State
	if err := s.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary(worst) = %v", err)
	}
	if !reflect.DeepEqual(s.costs, worstCosts().costs) {
		t.Errorf("the cost quotas did not read back")
	}
}

// TestBinaryScaleTail checks that the cost units' scales and what was
// reserved since their observations are written and read back, that a
// form without them reads them as zero, and that an empty tail, a scale
// beyond maxScale or a part unscaled beyond the whole is rejected.
func TestBinaryScaleTail(t *testing.T) {
	s := worst()
	s.costs.units = []costUnit{{name: "tokens", fits: 12500}, {name: "input-tokens", scale: 300, since: 1300, fixed: 200}}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(back.costs.units, s.costs.units) {
		t.Fatalf("read back as %+v (%v), want %+v", back.costs.units, err, s.costs.units)
	}
	s.costs.units[0].fits, s.costs.units[1].scale, s.costs.units[1].since, s.costs.units[1].fixed = 0, 0, 0, 0
	plain, _ := s.MarshalBinary()
	if len(plain) >= len(b) || plain[len(plain)-1] == tailScale {
		t.Errorf("a state of no scale is written with its tail (%d bytes, %d with it)", len(plain), len(b))
	}
	for name, tail := range map[string][]byte{
		"empty":           {tailScale, 0, 0, 0, 0, 0, 0, 0, 0},
		"scale too large": append([]byte{tailScale, 0, 0, 0, 0}, append(binary.AppendUvarint(nil, maxScale+1), 0, 0, 0)...),
		"fixed beyond":    {tailScale, 0, 0, 0, 0, 1, 5, 6, 0},
		"cut":             {tailScale, 0, 0, 0, 0, 1, 5, 4},
	} {
		if err := new(State).UnmarshalBinary(append(bytes.Clone(plain), tail...)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestBinaryVersions checks that a state without cost quotas is written
// as version 1, as before they existed, one with them as version 2, and
// that a version 2 form without them is rejected (it is never written).
func TestBinaryVersions(t *testing.T) {
	s := worst()
	b, _ := s.MarshalBinary()
	if b[0] != 1 {
		t.Errorf("without cost quotas: version %d, want 1", b[0])
	}
	b[0] = 2
	if err := new(State).UnmarshalBinary(b); err == nil {
		t.Errorf("version 2 without cost quotas was accepted")
	}
	b, _ = worstCosts().MarshalBinary()
	if b[0] != 2 {
		t.Errorf("with cost quotas: version %d, want 2", b[0])
	}
}

// openAIQuotas is what an OpenAI response states.
func openAIQuotas(reqs, tokens int64, full time.Duration) []parse.Quota {
	return []parse.Quota{
		{Unit: "requests", Limit: 500, Remaining: reqs, Reset: 120 * time.Millisecond, Dialect: "openai"},
		{Unit: "tokens", Limit: 60000, Remaining: tokens, Reset: full, Dialect: "openai"},
	}
}

// TestCostView checks what a key with a token quota shows: the quota, the
// reservations of the requests granted since its observation, what is left
// for a new request, the refill rate and when the quota is whole again.
func TestCostView(t *testing.T) {
	var s State
	cfg := Config{}
	var p Lease
	p.SetCost(Cost{Tokens: 1000})
	s.Acquire(t0, &cfg, Ask{}, &p)
	// 60000 a minute: 1000 a second.
	s.Release(t0.Add(time.Second), &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: openAIQuotas(499, 58999, time.Second)})
	now := t0.Add(time.Second)
	var a Lease
	a.SetCost(Cost{InputTokens: 3000, OutputTokens: 2000})
	if _, ok := s.Acquire(now, &cfg, Ask{}, &a); !ok {
		t.Fatal("not granted")
	}
	v := s.View(now.Add(500 * time.Millisecond))
	var tok *PolicyView
	for i := range v.Policies {
		if v.Policies[i].Unit == "tokens" {
			tok = &v.Policies[i]
		}
	}
	if tok == nil {
		t.Fatalf("no tokens policy in %+v", v.Policies)
	}
	want := PolicyView{Unit: "tokens", Quota: 60000, Remaining: 58999 + 500 - 5000, Reserved: 5000, Refill: 1000,
		ResetAt: now.Add(1001 * time.Millisecond), Stated: now}
	if !tok.ResetAt.Equal(want.ResetAt) {
		t.Errorf("View tokens ResetAt = %v, want %v", tok.ResetAt, want.ResetAt)
	}
	if !tok.Stated.Equal(want.Stated) {
		t.Errorf("View tokens Stated = %v, want %v", tok.Stated, want.Stated)
	}
	tok.ResetAt, tok.Stated = want.ResetAt, want.Stated
	if !reflect.DeepEqual(*tok, want) {
		t.Errorf("View tokens = %+v, want %+v", *tok, want)
	}
	s.Release(now.Add(time.Second), &cfg, &a, &Outcome{First: true, Bytes: -1, Quotas: openAIQuotas(499, 56000, 4*time.Second)})
	v = s.View(now.Add(time.Second))
	for _, p := range v.Policies {
		if p.Unit == "tokens" && (p.Reserved != 0 || p.Remaining != 56000) {
			t.Errorf("after the release: %+v, want nothing reserved and 56000 left", p)
		}
	}
}

// TestCostReservationsExpire checks that the reservation of a request that
// never ends lasts as long as its lease.
func TestCostReservationsExpire(t *testing.T) {
	var s State
	cfg := Config{Lease: 16 * time.Second}
	var p Lease
	s.Acquire(t0, &cfg, Ask{}, &p)
	s.Release(t0, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: openAIQuotas(499, 60000, 0)})
	var a Lease
	a.SetCost(Cost{Tokens: 60000})
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &a); !ok {
		t.Fatal("a whole quota was not granted")
	}
	var b Lease
	b.SetCost(Cost{Tokens: 1})
	if h, ok := s.Acquire(t0.Add(time.Second), &cfg, Ask{}, &b); ok || h.Reason != ReasonQuota {
		t.Fatalf("granted while the quota is reserved (hold %+v)", h)
	}
	// a's lease ends at the end of its slot, 17 s in.
	if _, ok := s.Acquire(t0.Add(17*time.Second), &cfg, Ask{}, &b); !ok {
		t.Fatal("a's reservation outlived its lease")
	}
	if s.costs.units[0].n != 1 {
		t.Errorf("reserved %d, want 1", s.costs.units[0].n)
	}
}

// TestCostUnitsBounded checks that a key tracks at most maxCostUnits units
// and maxCostQuotas quotas, whatever its server states.
func TestCostUnitsBounded(t *testing.T) {
	var s State
	cfg := Config{}
	var qs []parse.Quota
	for i := range 20 {
		qs = append(qs, parse.Quota{Policy: string(rune('a' + i)), Unit: "unit" + string(rune('a'+i%6)), Limit: 10, Remaining: 5, Reset: time.Second, Window: time.Second, Dialect: "ietf"})
	}
	now := t0
	for range 5 {
		var l Lease
		l.SetCost(Cost{Unit: "unita", Amount: 1})
		s.Acquire(now, &cfg, Ask{}, &l)
		s.Release(now, &cfg, &l, &Outcome{First: true, Bytes: -1, Quotas: qs})
		now = now.Add(2 * time.Minute)
	}
	if len(s.costs.units) > maxCostUnits || len(s.costs.quotas) > maxCostQuotas {
		t.Errorf("%d units and %d quotas kept", len(s.costs.units), len(s.costs.quotas))
	}
	b, _ := s.MarshalBinary()
	if err := new(State).UnmarshalBinary(b); err != nil {
		t.Errorf("does not read back: %v", err)
	}
}

// TestTypicalSizeCosts measures the binary form of an OpenAI key after a
// burst of requests.
func TestTypicalSizeCosts(t *testing.T) {
	var s State
	cfg := Config{}
	now := t0
	for i := range 20 {
		var l Lease
		l.SetCost(Cost{Tokens: 1000})
		if _, ok := s.Acquire(now, &cfg, Ask{Until: now.Add(30 * time.Second)}, &l); ok {
			s.Release(now.Add(80*time.Millisecond), &cfg, &l, &Outcome{First: true, Bytes: -1, Rand: uint64(i), Quotas: openAIQuotas(490, 50000, 10*time.Second)})
		}
		now = now.Add(100 * time.Millisecond)
	}
	b, _ := s.MarshalBinary()
	t.Logf("an OpenAI key: %d bytes", len(b))
	if len(b) > 250 {
		t.Errorf("%d bytes, want at most 250", len(b))
	}
}

// TestCostIn checks the units a Cost names.
func TestCostIn(t *testing.T) {
	c := Cost{InputTokens: 3, OutputTokens: 4, Unit: "points", Amount: 9}
	for unit, want := range map[string]int64{"requests": 1, "tokens": 7, "input-tokens": 3, "output-tokens": 4, "points": 9, "other": 0} {
		if got := c.In(unit); got != want {
			t.Errorf("In(%q) = %d, want %d", unit, got, want)
		}
	}
	if got := (&Cost{InputTokens: math.MaxInt64, OutputTokens: 1}).In("tokens"); got != math.MaxInt64 {
		t.Errorf("saturating sum = %d", got)
	}
	// A negative Tokens counts as zero, which is the input and output
	// tokens. (Taken as a cost of 0 tokens, a request whose Transport.Cost
	// said -1 went unpaced by the tokens quota: 3 of 10 refused.)
	if got := (&Cost{Tokens: -5, InputTokens: 2}).In("tokens"); got != 2 {
		t.Errorf("negative Tokens = %d, want 2, the input tokens", got)
	}
}

// TestCostFree checks that a cost free of every cost unit is one whose In
// is zero for every unit a cost quota may count, so that a request that
// costs nothing skips the key's cost quotas; and that a state whose cost
// unit counts requests, which the controller never writes, does not read
// back.
func TestCostFree(t *testing.T) {
	units := []string{"tokens", "input-tokens", "output-tokens", "points", "x", strings.Repeat("t", maxKeyLen)}
	vals := []int64{math.MinInt64, -1, 0, 1, math.MaxInt64}
	for _, a := range vals {
		for _, b := range vals {
			for _, c := range []Cost{{Tokens: a, InputTokens: b}, {InputTokens: a, OutputTokens: b}, {Tokens: a, Unit: "points", Amount: b}, {OutputTokens: a, Unit: "x", Amount: b}} {
				zero := true
				for _, u := range units {
					zero = zero && c.In(u) == 0
				}
				if c.free() && !zero {
					t.Errorf("%+v is free, but costs something", c)
				}
			}
		}
	}
	for _, u := range []string{"tokens", "requests", "concurrent-requests", "content-bytes", "request", ""} {
		var s State
		s.touch(instant(t0))
		s.costs.units = []costUnit{{name: u}}
		b, _ := s.MarshalBinary()
		if err := new(State).UnmarshalBinary(b); (err == nil) != isCostUnit(u) {
			t.Errorf("a cost unit %q: UnmarshalBinary = %v", u, err)
		}
	}
}

// FuzzCosts runs the controller on any state with requests of any cost and
// answers stating token quotas: it must not panic, and must leave a State
// that reads back.
func FuzzCosts(f *testing.F) {
	b, _ := worstCosts().MarshalBinary()
	f.Add(b, int64(0), int64(1000), int64(500), uint8(0))
	f.Add([]byte{}, int64(time.Second), int64(-1), int64(0), uint8(7))
	f.Add([]byte{}, int64(-time.Hour), int64(math.MaxInt64), int64(math.MinInt64), uint8(255))
	f.Fuzz(runFuzzCosts)
}

// runFuzzCosts is one run of FuzzCosts.
func runFuzzCosts(t *testing.T, data []byte, offset, cost, remaining int64, op uint8) {
	var s State
	if err := s.UnmarshalBinary(data); err != nil {
		return
	}
	now := t0.Add(time.Duration(offset))
	cfg := Config{Lease: time.Duration(op) * time.Second}
	dialects := [...]string{"openai", "anthropic", "ietf", "x"}
	units := [...]string{"tokens", "input-tokens", "output-tokens", "points", "requests"}
	want := Cost{Tokens: cost, InputTokens: cost / 2, OutputTokens: remaining, Unit: "points", Amount: cost}
	for i := range 4 {
		var l Lease
		l.SetCost(want)
		_, ok := s.Acquire(now, &cfg, Ask{}, &l)
		var qs []parse.Quota
		for j := range int(op%5) + 1 {
			qs = append(qs, parse.Quota{Policy: dialects[(i+j)%4], Unit: units[(int(op)+j)%5], Limit: cost + int64(j),
				Remaining: remaining - int64(i), Reset: time.Duration(offset + int64(j)), Window: time.Duration(op) * time.Millisecond,
				Dialect: dialects[(int(op)>>2+j)%4]})
		}
		out := Outcome{First: true, Bytes: -1, Refused: op&(1<<i) != 0, Failed: op&(16<<i) != 0, Quotas: qs, Rand: uint64(cost),
			Refusal: Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}}
		if ok {
			s.Release(now.Add(time.Millisecond), &cfg, &l, &out)
		}
		now = now.Add(time.Duration(remaining % int64(time.Minute)))
	}
	s.View(now)
	b1, _ := s.MarshalBinary()
	var s2 State
	if err := s2.UnmarshalBinary(b1); err != nil {
		t.Fatalf("the controller left a State that does not read back: %v\n%x", err, b1)
	}
	b2, _ := s2.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		t.Fatalf("MarshalBinary is not stable:\n%x\n%x", b1, b2)
	}
}

// TestUnstatedChargeAfterRefill: a request whose answer states none of the
// token quotas is charged to them (DESIGN.md §10; costs.observe), and for
// a quota refilled continuously, to the level it has refilled to since its
// observation. The charge was cut at 0 against the stale remaining, and
// the refill added on top: it was lost.
func TestUnstatedChargeAfterRefill(t *testing.T) {
	var s State
	cfg := Config{}
	q := func(r int64) []parse.Quota {
		return []parse.Quota{{Unit: "tokens", Limit: 1000, Remaining: r, Reset: 10 * time.Second, Dialect: "openai"}}
	}
	var p Lease
	p.SetCost(Cost{Tokens: 1000})
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &p); !ok {
		t.Fatal("first not granted")
	}
	// Spent: 0 of 1000 left, whole in 10 s: about 100 a second.
	s.Release(t0, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: q(0)})

	// 20 s later the quota is whole again: 1000 left.
	now := t0.Add(20 * time.Second)
	var a Lease
	a.SetCost(Cost{Tokens: 800})
	if _, ok := s.Acquire(now, &cfg, Ask{}, &a); !ok {
		t.Fatal("a not granted on a whole quota")
	}
	// a's answer states no token quota (a 5xx from a proxy, say): it is
	// charged its 800 tokens; 200 are left.
	s.Release(now, &cfg, &a, &Outcome{First: true, Bytes: -1})

	var b Lease
	b.SetCost(Cost{Tokens: 800})
	if _, ok := s.Acquire(now, &cfg, Ask{}, &b); ok {
		v := s.View(now)
		t.Errorf("b (800 tokens) granted with only 200 left after a's charge; view %+v", v.Policies)
	}
}

// TestWholeQuotaWaitsForRelease: admit returns until zero "when only a
// request in flight ending can make room". A quota refilled continuously
// that is already whole (its level capped at the limit) cannot make room
// by refilling: only the reservation of the request in flight ending can.
// The request was told to look again (needed-available)/rate later, again
// and again: with 1 token lacking at 1000 tokens a second, every
// millisecond for as long as the other request was in flight.
func TestWholeQuotaWaitsForRelease(t *testing.T) {
	var s State
	cfg := Config{}
	var p Lease
	p.SetCost(Cost{Tokens: 1})
	s.Acquire(t0, &cfg, Ask{}, &p)
	// 0 of 60000 left, whole in 60 s: about 1000 a second.
	s.Release(t0, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: openAIQuotas(499, 0, time.Minute)})

	now := t0.Add(2 * time.Minute) // whole again
	var a Lease
	a.SetCost(Cost{Tokens: 59990})
	if _, ok := s.Acquire(now, &cfg, Ask{}, &a); !ok {
		t.Fatal("a not granted on a whole quota")
	}
	// a is in flight (a long completion) for 10 s; b lacks 1 token.
	end := now.Add(10 * time.Second)
	looks := 0
	for now.Before(end) {
		var b Lease
		b.SetCost(Cost{Tokens: 11})
		h, ok := s.Acquire(now, &cfg, Ask{}, &b)
		if ok {
			t.Fatalf("b granted at %v while a reserves 59990 of 60000", now.Sub(t0))
		}
		looks++
		if h.Until().IsZero() {
			break // waits for a change: a's answer
		}
		if looks == 1 {
			t.Logf("first hold: until +%v, wake %v, reason %v", h.Until().Sub(now), h.Wake(), h.Reason)
		}
		now = h.Until()
	}
	if looks > 10 {
		t.Errorf("b looked again %d times in the 10 s a was in flight, though the quota was whole (only a's end could make room)", looks)
	}
}

// A unit's reservations beyond 64 merge, the two oldest into one, kept
// until both its requests are counted; between the two answers its first
// grant is at or before the unit's mark. Before, the binary form wrote its
// distance from the mark, which wrapped, and the form MarshalBinary wrote
// was one UnmarshalBinary rejected: a Store held a state it could not read
// (redisstore started the key over).
func TestMergedReservationRoundTrip(t *testing.T) {
	var s State
	cfg := &Config{}
	now := time.Unix(1_700_000_000, 0)
	quotas := []parse.Quota{
		{Unit: "requests", Limit: 100000, Remaining: 99000, Reset: time.Second, Dialect: "openai"},
		{Unit: "tokens", Limit: 10_000_000, Remaining: 9_000_000, Reset: time.Second, Dialect: "openai"},
	}
	acquire := func() (*Lease, bool) {
		l := new(Lease)
		l.SetCost(Cost{Tokens: 200})
		_, ok := s.Acquire(now, cfg, Ask{}, l)
		return l, ok
	}
	release := func(l *Lease) {
		s.Release(now, cfg, l, &Outcome{First: true, Bytes: -1, Quotas: quotas})
	}
	// Ramp up: the probe, then rounds of 4, 8, 16, ...
	for range 6 {
		var ls []*Lease
		for {
			l, ok := acquire()
			if !ok {
				break
			}
			ls = append(ls, l)
		}
		now = now.Add(10 * time.Millisecond)
		for _, l := range ls {
			release(l)
		}
		now = now.Add(10 * time.Millisecond)
	}
	var flight []*Lease
	for {
		l, ok := acquire()
		if !ok {
			break
		}
		flight = append(flight, l)
	}
	if len(flight) <= 64 {
		t.Fatalf("only %d in flight; the test needs more than 64", len(flight))
	}
	now = now.Add(10 * time.Millisecond)
	release(flight[0]) // the oldest answers: half of a merged reservation
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Errorf("%d requests in flight, the oldest answered: UnmarshalBinary(MarshalBinary()) = %v", len(flight), err)
	}
}

// A refill rate estimated too high (one answer's reset of 1ns) is kept as
// the highest seen; a refusal's own estimate replaces it. Before, it
// stayed until the limit changed: the quota read as refilled at once, and
// every request after a refusal was let go into the spent quota.
func TestRefusalResetsRefillRate(t *testing.T) {
	var s State
	cfg := Config{}
	q := func(r int64, reset time.Duration) []parse.Quota {
		return []parse.Quota{{Unit: "tokens", Limit: 10000, Remaining: r, Reset: reset, Dialect: "openai"}}
	}
	send := func(now time.Time, out Outcome) bool {
		var l Lease
		l.SetCost(Cost{Tokens: 1000})
		if _, ok := s.Acquire(now, &cfg, Ask{}, &l); !ok {
			return false
		}
		s.Release(now, &cfg, &l, &out)
		return true
	}
	if !send(t0, Outcome{First: true, Bytes: -1, Quotas: q(9000, time.Nanosecond)}) {
		t.Fatal("first not granted")
	}
	// Refused: 500 left, whole in a minute (about 158 a second).
	now := t0.Add(time.Millisecond)
	send(now, Outcome{First: true, Bytes: -1, Refused: true, Quotas: q(500, time.Minute),
		Refusal: Refusal{Retryable: true, MaxWait: time.Hour}})
	// 5 s later about 790 have refilled, 1290 left: room for 1000. At the
	// rate of the 1ns reset, the quota read as whole at once.
	for _, tt := range []struct {
		after time.Duration
		want  bool
	}{{2 * time.Second, false}, {5 * time.Second, true}} {
		var l Lease
		l.SetCost(Cost{Tokens: 1000})
		at := now.Add(tt.after)
		_, ok := s.Acquire(at, &cfg, Ask{}, &l)
		if ok {
			s.Release(at, &cfg, &l, &Outcome{First: true, Bytes: -1})
		}
		if ok != tt.want {
			t.Errorf("%v after the refusal: granted %v, want %v; policies %+v", tt.after, ok, tt.want, s.View(at).Policies)
		}
	}
}

// A request held for its cost claims no turn, so that smaller requests go
// meanwhile; held as long as its quota takes to be whole again (60 s
// here), it claims one, and a smaller request that first asked after it
// waits behind it though the quota has room for that one. Before, it never
// claimed one, and smaller requests took every refill until MaxWait. A
// request that costs nothing is not held by that claim: it takes nothing
// the claimant waits for (held so, a GET waited up to a window).
func TestCostHeldLongClaimsTurn(t *testing.T) {
	var s State
	cfg := Config{}
	var p Lease
	p.SetCost(Cost{Tokens: 1})
	s.Acquire(t0, &cfg, Ask{}, &p)
	// 100 of 60000 left, whole in 60 s: about 1000 a second.
	s.Release(t0, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: openAIQuotas(499, 100, time.Minute)})

	big := func(at, since time.Time) (Hold, bool) {
		var l Lease
		l.SetCost(Cost{Tokens: 50000})
		return s.Acquire(at, &cfg, Ask{Turns: true, Since: since}, &l)
	}
	// send sends a request costing c, answered at once with no fields.
	send := func(at time.Time, c Cost) bool {
		var l Lease
		l.SetCost(c)
		if _, ok := s.Acquire(at, &cfg, Ask{Turns: true}, &l); !ok {
			return false
		}
		s.Release(at, &cfg, &l, &Outcome{First: true, Bytes: -1})
		return true
	}
	small := Cost{Tokens: 900} // most of each second's refill
	if h, ok := big(t0, time.Time{}); ok || h.Reason != ReasonQuota {
		t.Fatalf("50000 tokens of 100 left: granted %v, held %+v", ok, h)
	}
	// For a minute it asks again each second, held for its cost, and a
	// small request goes each second past it.
	for i := 1; i < 60; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		if _, ok := big(at, t0); ok {
			t.Fatalf("50000 granted at +%ds while small requests took the refill", i)
		}
		if !send(at, small) {
			t.Fatalf("+%ds: a request of 900 tokens held behind one held for its cost %ds", i, i)
		}
	}
	// Held a minute, as long as the quota takes to be whole: it claims a
	// turn, and the next small request waits behind it; one that costs
	// nothing does not.
	at := t0.Add(61 * time.Second)
	if _, ok := big(at, t0); ok {
		t.Fatal("50000 granted while small requests took the refill")
	}
	if send(at, small) {
		t.Error("a request of 900 tokens went past one held for its cost a minute")
	}
	if !send(at, Cost{}) {
		t.Error("a request that costs nothing was held behind one held for its cost")
	}
	// Nor by the claim of the small request held behind it.
	if !send(at.Add(time.Second), Cost{}) {
		t.Error("a request that costs nothing was held behind a request held behind one held for its cost")
	}
	// The claim travels in the binary form, and holds the same there.
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(back.turns, s.turns) || len(back.turns.c) != 2 || !back.turns.c[0].cost || !back.turns.c[1].cost {
		t.Errorf("turns read back as %+v (%v), want %+v, two claims for a cost", back.turns, err, s.turns)
	}
	// 50000 refilled by +110 s (the small requests took about 59000): the
	// claimant goes.
	if _, ok := big(t0.Add(110*time.Second), t0); !ok {
		t.Error("the claimant was not granted once its cost had room")
	}
	if !send(t0.Add(110*time.Second), Cost{Tokens: 1}) {
		t.Error("its claim still held a small request once it was granted")
	}
}

// TestBinaryCostClaim checks that a claim for a cost is only of
// ReasonQuota in the binary form.
func TestBinaryCostClaim(t *testing.T) {
	s := worst()
	s.turns = turns{c: []claim{{since: s.born + 1, n: 1, until: s.born + int64(time.Second), reason: ReasonPace, cost: true}}}
	b, _ := s.MarshalBinary()
	if err := new(State).UnmarshalBinary(b); err == nil {
		t.Error("a claim for a cost held for the pace was accepted")
	}
}

// anthropicQuotas is what an Anthropic response states: requests, input and
// output tokens, each whole again after reset.
func anthropicQuotas(in, out int64, inFull, outFull time.Duration) []parse.Quota {
	return []parse.Quota{
		{Unit: "requests", Limit: 50, Remaining: 40, Reset: time.Second, Dialect: "anthropic"},
		{Unit: "input-tokens", Limit: 30000, Remaining: in, Reset: inFull, Dialect: "anthropic"},
		{Unit: "output-tokens", Limit: 8000, Remaining: out, Reset: outFull, Dialect: "anthropic"},
	}
}

// TestScaleNotRaisedByAnotherQuotasRefusal: an Anthropic refusal that the
// spent input-tokens quota explains (the output-tokens quota has room for
// the request's output bound) does not raise the scale of output-tokens,
// which the server counts exactly (max_tokens): it did, and a later
// request whose output bound fit the output quota was held.
func TestScaleNotRaisedByAnotherQuotasRefusal(t *testing.T) {
	var s State
	cfg := Config{}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var p Lease
	if _, ok := s.Acquire(now, &cfg, Ask{}, &p); !ok {
		t.Fatal("probe not granted")
	}
	s.Release(now, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: anthropicQuotas(30000, 8000, 0, 0)})

	// a: 2000 input tokens, max_tokens 1024. Another client spent the
	// input quota: the server refuses a for input tokens; its output
	// quota has 1500 left, room for a's 1024.
	now = now.Add(time.Second)
	var a Lease
	a.SetCost(Cost{InputTokens: 2000, OutputTokens: 1024})
	if _, ok := s.Acquire(now, &cfg, Ask{}, &a); !ok {
		t.Fatal("a not granted")
	}
	now = now.Add(100 * time.Millisecond)
	s.Release(now, &cfg, &a, &Outcome{First: true, Bytes: -1, Refused: true,
		Quotas:  anthropicQuotas(100, 1500, 60*time.Second, 60*time.Second),
		Refusal: Refusal{Wait: 4 * time.Second, Given: true, Reason: ReasonRetryAfter, Backoff: time.Second, MaxWait: time.Minute}})

	// A minute later an answer states 1100 output tokens left, the input
	// quota whole. b's output bound, 1024, fits.
	now = now.Add(time.Minute)
	var c Lease
	if _, ok := s.Acquire(now, &cfg, Ask{}, &c); !ok {
		t.Fatal("c not granted")
	}
	s.Release(now, &cfg, &c, &Outcome{First: true, Bytes: -1, Quotas: anthropicQuotas(30000, 1100, 0, 60*time.Second)})
	var b Lease
	b.SetCost(Cost{InputTokens: 100, OutputTokens: 1024})
	if h, ok := s.Acquire(now, &cfg, Ask{}, &b); !ok {
		t.Errorf("b (1024 output tokens) held (%v until +%v) with 1100 output tokens left: a refusal the input quota explained raised the output quota's scale",
			h.Reason, h.Until().Sub(now))
	}
}

// TestScaleNotRaisedByDayQuota: a key with two token quotas in windows, a
// minute's and a day's (IETF RateLimit, unit tokens). The day's is spent
// and refuses a request that the minute's has room for: the server
// counted nothing more, and the scale of tokens stays (it was raised, and
// after the day's reset a request that fit the minute's quota was held).
func TestScaleNotRaisedByDayQuota(t *testing.T) {
	var s State
	cfg := Config{}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	q := func(minute, day int64, dayReset time.Duration) []parse.Quota {
		return []parse.Quota{
			{Policy: "minute", Unit: "tokens", Limit: 10000, Remaining: minute, Window: time.Minute, Reset: 30 * time.Second, Dialect: "ietf"},
			{Policy: "day", Unit: "tokens", Limit: 100000, Remaining: day, Window: 24 * time.Hour, Reset: dayReset, Dialect: "ietf"},
		}
	}
	var p Lease
	s.Acquire(now, &cfg, Ask{}, &p)
	s.Release(now, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: q(10000, 3000, time.Hour)})
	// b (2000) goes and is refused by the day's quota, which another
	// client spent meanwhile; the minute's has 3000 left.
	var b Lease
	b.SetCost(Cost{InputTokens: 2000, OutputTokens: 0})
	if _, ok := s.Acquire(now, &cfg, Ask{}, &b); !ok {
		t.Fatal("b not granted")
	}
	now = now.Add(100 * time.Millisecond)
	s.Release(now, &cfg, &b, &Outcome{First: true, Bytes: -1, Refused: true, Quotas: q(3000, 0, time.Hour),
		Refusal: Refusal{Backoff: time.Second, MaxWait: 2 * time.Hour}})

	// After the day's reset, in a new minute: 8000 left in the minute,
	// 100000 in the day. c costs 6000 input tokens: it fits.
	now = now.Add(2 * time.Hour)
	var r Lease
	if _, ok := s.Acquire(now, &cfg, Ask{}, &r); !ok {
		t.Fatal("probe not granted")
	}
	s.Release(now, &cfg, &r, &Outcome{First: true, Bytes: -1, Quotas: q(8000, 100000, 22*time.Hour)})
	var c Lease
	c.SetCost(Cost{InputTokens: 6000})
	if h, ok := s.Acquire(now, &cfg, Ask{}, &c); !ok {
		t.Errorf("c (6000 tokens) held (%v until +%v) with 8000 left in the minute and 100000 in the day: the day quota's refusal raised the scale",
			h.Reason, h.Until().Sub(now))
	}
}

// TestScaleNoisyRemaining: a server that counts exactly what is declared
// but states its remaining with a noise of ±300 tokens about the truth
// (replicas, lazily updated counters), alternately, on requests of 1000.
// The samples scatter by more than half either way; the scale rises with
// them, but stays within a few tenths, and falls back once the answers
// are true again. (With the samples above one moving it half way and
// those below a sixteenth, it climbed to 1.7 times.)
func TestScaleNoisyRemaining(t *testing.T) {
	var s State
	cfg := Config{}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	q := func(r int64) []parse.Quota {
		return []parse.Quota{{Unit: "tokens", Limit: 60000, Remaining: r, Reset: time.Duration(60000-r) * time.Millisecond, Dialect: "openai"}}
	}
	level := int64(30000) // the server's, refilled 1000 a second
	var p Lease
	s.Acquire(now, &cfg, Ask{}, &p)
	s.Release(now, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: q(level)})
	send := func(i int, noise int64) {
		now = now.Add(time.Second)
		var l Lease
		l.SetCost(Cost{InputTokens: 800, OutputTokens: 200})
		if _, ok := s.Acquire(now, &cfg, Ask{}, &l); !ok {
			t.Fatalf("request %d held", i)
		}
		s.Release(now, &cfg, &l, &Outcome{First: true, Bytes: -1, Quotas: q(level + noise)})
	}
	for i := range 40 {
		send(i, int64(300-600*(i%2)))
	}
	if sc := s.costs.units[0].scale; sc > 400 {
		t.Errorf("scale %d after answers scattered ±300 about the truth, want at most 400", sc)
	}
	for i := range 20 {
		send(40+i, 0)
	}
	if sc := s.costs.units[0].scale; sc > 20 {
		t.Errorf("scale %d after 20 true answers, want at most 20", sc)
	}
	var big Lease
	big.SetCost(Cost{InputTokens: 20000, OutputTokens: 500})
	if h, ok := s.Acquire(now, &cfg, Ask{}, &big); !ok {
		t.Errorf("a request of 20500 tokens held (%v until +%v) with 30000 left", h.Reason, h.Until().Sub(now))
	}
}

// TestUnreserveAtScaleReserved: a request reserved while the scale was
// high, and ending unanswered after it fell, frees all it reserved; freed
// at the scale then, 1250 of its 2250 tokens stayed held until the next
// answer.
func TestUnreserveAtScaleReserved(t *testing.T) {
	var s State
	cfg := Config{}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	q := []parse.Quota{{Unit: "tokens", Limit: 60000, Remaining: 60000, Reset: 0, Dialect: "openai"}}
	var p Lease
	s.Acquire(now, &cfg, Ask{}, &p)
	s.Release(now, &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: q})
	u := &s.costs.units[0]
	u.scale = 1000 // the server was seen to count twice the prompts
	var a Lease
	a.SetCost(Cost{InputTokens: 1000})
	if _, ok := s.Acquire(now, &cfg, Ask{}, &a); !ok {
		t.Fatal("a not granted")
	}
	if u.n != 2250 {
		t.Fatalf("a reserved %d, want 2250 (1000, the scale's 1000 and a quarter more)", u.n)
	}
	u.scale = 0 // fallen since, as answers taught
	s.Release(now.Add(time.Second), &cfg, &a, &Outcome{First: true, Bytes: -1, Failed: true})
	if u.n != 0 || len(u.res) != 0 {
		t.Errorf("after a ended unanswered, %d reserved in %d reservations, want none", u.n, len(u.res))
	}
}

// A window longer than MaxPause, which no controller writes (window caps
// every window it keeps), was read back from a Store: a quota of one
// request in 400 days written there by a hostile or broken process held
// the key 400 days in every process sharing it, and kept the stored state
// alive as long. Such a state is rejected now, as every value out of
// bounds is; one of MaxPause reads back.
func TestBinaryRejectsWindowBeyondMaxPause(t *testing.T) {
	for name, set := range map[string]func(s *State, w int64){
		"stated quota":  func(s *State, w int64) { s.policies[0].w = w },
		"learned quota": func(s *State, w int64) { s.learn.quota.w = w },
		"cost quota":    func(s *State, w int64) { s.costs.quotas[0].w = w },
	} {
		for _, w := range []int64{int64(MaxPause), int64(MaxPause) + 1, int64(maxSpan)} {
			s := worstCosts()
			set(s, w)
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var back State
			err = back.UnmarshalBinary(b)
			if want := w <= int64(MaxPause); (err == nil) != want {
				t.Errorf("%s of window %v: UnmarshalBinary = %v, want an error %v", name, time.Duration(w), err, !want)
			}
		}
	}
}

// TestBinaryFromTail checks that each cost unit's latest grant when what
// was reserved since started over is written and read back, that a form
// without it reads it as zero, and that an empty tail or a grant beyond
// the state's is rejected.
func TestBinaryFromTail(t *testing.T) {
	s := worst()
	s.costs.units = []costUnit{{name: "tokens", from: 3}, {name: "input-tokens"}}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(back.costs.units, s.costs.units) {
		t.Fatalf("read back as %+v (%v), want %+v", back.costs.units, err, s.costs.units)
	}
	s.costs.units[0].from = 0
	plain, _ := s.MarshalBinary()
	if len(plain) >= len(b) || plain[len(plain)-1] == tailFrom {
		t.Errorf("a state of no such grant is written with its tail (%d bytes, %d with it)", len(plain), len(b))
	}
	beyond := binary.AppendUvarint([]byte{tailFrom}, s.seq+1)
	for name, tail := range map[string][]byte{
		"empty":  {tailFrom, 0, 0},
		"beyond": append(beyond, 0),
		"cut":    {tailFrom, 1},
	} {
		if err := new(State).UnmarshalBinary(append(bytes.Clone(plain), tail...)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The binary form keeps which units a request declared a cost in and
// which quotas' windows of MaxPause were cut from a longer one, while the
// units or quotas are full, where they are read; a form without them
// reads no unit as declared and every such window as cut.
func TestBinaryCostFlags(t *testing.T) {
	s := worstCosts()
	s.costs.units[1].declared = true
	s.costs.quotas[2].cut = true
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got State
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary = %v", err)
	}
	if !reflect.DeepEqual(got.costs, s.costs) {
		t.Errorf("the cost flags did not read back")
	}
	s.costs.units[1].declared = false
	s.costs.quotas = s.costs.quotas[:3]
	s.costs.units = s.costs.units[:3]
	b, err = s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got = State{}
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary = %v", err)
	}
	for i, q := range got.costs.quotas {
		if !q.cut {
			t.Errorf("quota %d of a window of MaxPause, read from a form without flags: not cut", i)
		}
	}
}
