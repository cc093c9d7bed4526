package redisstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// A shard keeps at most max entries besides those in use: an entry pinned
// by a long Wait at the back of the list stopped every eviction, and the
// shard grew by an entry for every new key while it waited.
func TestShardBoundedPastPinned(t *testing.T) {
	var sh shard
	sh.init(4)
	long := sh.pin("long") // a Wait for a pause
	for i := range 500 {
		sh.unpin(sh.pin(fmt.Sprint("k", i)))
		if n := len(sh.m); n > 4 {
			t.Fatalf("after %d keys, %d entries kept with max 4", i+1, n)
		}
	}
	if sh.m["long"] != long {
		t.Error("the entry in use was forgotten")
	}
	// Every entry in use: kept beyond max, then trimmed once unpinned.
	var pinned []*entry
	for i := range 8 {
		pinned = append(pinned, sh.pin(fmt.Sprint("p", i)))
	}
	if n := len(sh.m); n != 9 {
		t.Errorf("%d entries kept, want the 9 in use", n)
	}
	for _, e := range append(pinned, long) {
		sh.unpin(e)
	}
	if n := len(sh.m); n > 4 {
		t.Errorf("all unpinned: %d entries kept with max 4", n)
	}
}

// A key's measure of how far the server's clock is ahead is the least of
// its recent swaps': one that waited behind a busy Redis does not raise it.
// It follows the offset down at once, up as soon as a reply shows the
// server's clock past it, and forgets measures two periods old.
func TestClockMeasureLeast(t *testing.T) {
	start := time.Now()
	at := func(d time.Duration) time.Time { return start.Add(d) }
	var m clockMeasure
	// Server's clock 5 ms ahead, round trips of 0.2 ms.
	m.add(5200, 4800, at(0))
	m.add(5300, 4900, at(time.Second))
	if got := m.get(); got != 5200 {
		t.Fatalf("after two measures, %d, want the least (5200)", got)
	}
	// A swap queued 0.8 s behind a busy Redis: the script ran at once
	// before its reply.
	m.add(805000, 4800, at(2*time.Second))
	if got := m.get(); got != 5200 {
		t.Errorf("after a slow swap, %d, want 5200 still", got)
	}
	// The offset shrinks to 3 ms.
	m.add(3200, 2800, at(3*time.Second))
	if got := m.get(); got != 3200 {
		t.Errorf("after the server's clock went back 2 ms, %d, want 3200", got)
	}
	// It grows to 20 ms: the reply shows the server's clock past 3.2 ms.
	m.add(20200, 19800, at(4*time.Second))
	if got := m.get(); got != 20200 {
		t.Errorf("after the server's clock went 17 ms forward, %d, want 20200", got)
	}
	// The least of a period is kept through the next, not beyond.
	m.add(25000, 19800, at(4*time.Second+clockPeriod))
	if got := m.get(); got != 20200 {
		t.Errorf("a period on, %d, want 20200", got)
	}
	m.add(26000, 19800, at(4*time.Second+2*clockPeriod))
	if got := m.get(); got != 25000 {
		t.Errorf("two periods on, %d, want 25000", got)
	}
}

// A state sent with a notification is taken as the key's only when it is
// of the generation the notification names and was not written before the
// state held (see follows): a replay of an earlier one is not.
func TestNotifiedStateFollows(t *testing.T) {
	now := time.Now()
	var c control.State
	var l control.Lease
	form := func() []byte {
		b, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	grant := func() {
		if _, ok := c.Acquire(now, &control.Config{}, control.Ask{}, &l); !ok {
			t.Fatal("not granted")
		}
		c.Release(now, &control.Config{}, &l, &control.Outcome{})
	}
	grant()
	first := form()
	if _, ok := c.Acquire(now, &control.Config{}, control.Ask{}, &l); !ok {
		t.Fatal("not granted")
	}
	second := form() // a grant more, at the same generation
	c.NextGeneration()
	third := form()
	genOf := func(b []byte) uint64 { g, _, _, _ := control.Stamp(b); return g }
	g1, g3 := genOf(first), genOf(third)
	if genOf(second) != g1 || g3 <= g1 {
		t.Fatalf("generations %d, %d, %d: want the first two equal, the third after", g1, genOf(second), g3)
	}
	var other control.State // another incarnation
	if _, ok := other.Acquire(now.Add(time.Hour), &control.Config{}, control.Ask{}, &l); !ok {
		t.Fatal("not granted")
	}
	otherForm, _ := other.MarshalBinary()
	for _, tc := range []struct {
		name  string
		state []byte
		gen   uint64
		cur   []byte
		want  bool
	}{
		{"next grants", second, g1, first, true},
		{"next generation", third, g3, second, true},
		{"the same", second, g1, second, true},
		{"nothing held", first, g1, nil, true},
		{"fewer grants", first, g1, second, false},
		{"an earlier generation", second, g1, third, false},
		{"another generation named", first, g3, first, false},
		{"another identity", otherForm, genOf(otherForm), third, true},
		{"empty", []byte{}, 0, first, false},
		{"not a state", []byte("x"), 0, first, false},
	} {
		if got := follows(tc.state, tc.gen, tc.cur); got != tc.want {
			t.Errorf("%s: follows = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The lead handed to an update whose context ended passes to the next
// update queued, or, none queued, leaves the key led by none: the next
// update to come leads. Lost, the key's updates would wait for a lead that
// never comes; kept, the update would send its swap unasked.
func TestShardPassLead(t *testing.T) {
	var sh shard
	sh.init(4)
	e := sh.pin("k")
	defer sh.unpin(e)
	newOp := func() *op { return &op{ctx: t.Context(), done: make(chan result, 1)} }
	o, p := newOp(), newOp()
	if !sh.enqueue(e, o) || sh.enqueue(e, p) {
		t.Fatal("the first update queued does not lead alone")
	}
	sh.handOff(e) // o leads, as one whose batch ended hands on
	if r := <-o.done; !r.lead {
		t.Fatalf("o got %+v, want the lead", r)
	}
	sh.pass(e, o)
	select {
	case r := <-p.done:
		if !r.lead {
			t.Fatalf("p got %+v, want the lead", r)
		}
	default:
		t.Fatal("the lead o passed on did not reach p")
	}
	sh.pass(e, p)
	if e.leading || len(e.queue) != 0 {
		t.Fatalf("after the last update passed: leading %v, %d queued; want none", e.leading, len(e.queue))
	}
	if q := newOp(); !sh.enqueue(e, q) {
		t.Error("the next update does not lead")
	}
}
