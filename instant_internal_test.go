package polite

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// TestClock checks that the cheap clock reads the current instant, with a
// monotonic reading, outside a synctest bubble.
func TestClock(t *testing.T) {
	var c clock
	for range 3 {
		before := time.Now()
		got := c.now()
		after := time.Now()
		if got.Before(before) || got.After(after) {
			t.Errorf("now() = %v, not within [%v, %v]", got, before, after)
		}
		if !strings.Contains(got.String(), " m=") {
			t.Errorf("now() = %v, want a monotonic reading", got)
		}
		if d := got.Round(0).Sub(after.Round(0)); d > time.Millisecond || d < -time.Second {
			t.Errorf("now() wall clock is %v off the system's", d)
		}
	}
}

// TestClockBubble checks that the cheap clock reads a synctest bubble's
// time inside it, though its base was read outside, and the real time again
// once out of it.
func TestClockBubble(t *testing.T) {
	var c clock
	c.now() // a base outside the bubble
	synctest.Test(t, func(t *testing.T) {
		for _, d := range []time.Duration{0, time.Millisecond, 700 * time.Millisecond, 3 * time.Second, time.Hour} {
			time.Sleep(d)
			if got, want := c.now(), time.Now(); !got.Equal(want) {
				t.Errorf("after %v in the bubble: now() = %v, want %v", d, got, want)
			}
		}
	})
	before := time.Now()
	if got := c.now(); got.Before(before) || got.Sub(before) > time.Second {
		t.Errorf("out of the bubble: now() = %v, want about %v", got, before)
	}
}

// TestOriginMemo checks that the memo of the last origin gives the key
// originKey gives, and its shard, whatever the order of the origins.
func TestOriginMemo(t *testing.T) {
	tr := &Transport{}
	b := tr.budgetOf()
	urls := []string{
		"http://api.test/", "http://api.test/x", "https://API.test:443/", "https://api.test/",
		"http://api.test:8080/", "http://other.test/", "http://api.test/", "http://api.test/",
		"https://[::1]:443/", "http://bücher.example/", "http://bücher.example/", "http://api.test.",
	}
	for round := range 3 {
		for _, u := range urls {
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			var kb budgetKey
			got := tr.key(req, b, &kb)
			want := originKey(req.URL.Scheme, req.URL.Host)
			if got.m != want.m || got.custom {
				t.Errorf("round %d: key(%s) = %+v, want %+v", round, u, got, want)
			}
			if got.sh != nil && got.sh != b.mem.shard(got.m) {
				t.Errorf("round %d: key(%s) has the shard of another key", round, u)
			}
		}
	}
	req, _ := http.NewRequest(http.MethodGet, urls[0], nil)
	if m := tr.memo[memoSlot(req.URL.Host)].Load(); m == nil || m.host != req.URL.Host || m.key.sh == nil {
		t.Errorf("memo after repeated origins: %+v, want %s with its shard", m, req.URL.Host)
	}
}

// TestOriginMemoAllocs checks that the memo costs no allocation for one
// origin, and none for origins that alternate, in one slot or two.
func TestOriginMemoAllocs(t *testing.T) {
	tr := &Transport{}
	b := tr.budgetOf()
	var kb budgetKey
	a, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
	c, _ := http.NewRequest(http.MethodGet, "http://c.test/", nil)
	tr.key(a, b, &kb)
	tr.key(a, b, &kb)
	if n := testing.AllocsPerRun(100, func() { tr.key(a, b, &kb) }); n != 0 {
		t.Errorf("one origin: %v allocations per key, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { tr.key(c, b, &kb); tr.key(a, b, &kb) }); n != 0 {
		t.Errorf("alternating origins: %v allocations per key, want 0", n)
	}
	// Two origins in the same slot.
	same := make(map[uint]*http.Request)
	for i := 0; ; i++ {
		r, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://o%d.test/", i), nil)
		s := memoSlot(r.URL.Host)
		if o := same[s]; o != nil {
			if n := testing.AllocsPerRun(100, func() { tr.key(r, b, &kb); tr.key(o, b, &kb) }); n != 0 {
				t.Errorf("alternating origins in one slot: %v allocations per key, want 0", n)
			}
			break
		}
		same[s] = r
	}
}

// TestReadingInstant checks that a reading's instant and Unix nanoseconds,
// read by an addition, are those of its time.Time, at every base however
// far from now, and every elapsed time.
func TestReadingInstant(t *testing.T) {
	bases := []time.Time{
		time.Now(), time.Now().Round(0), time.Date(2026, 11, 29, 22, 0, 0, 999999999, time.UTC),
		time.Unix(0, 0), time.Unix(-1, 999999999), time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2115, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2117, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, 1<<62-1), time.Date(3000, 1, 1, 0, 0, 0, 0, time.Local),
	}
	ds := []time.Duration{0, 1, time.Second - 1, time.Second, time.Hour, 400 * 24 * time.Hour, maxElapsed - 1, maxElapsed, -1, -time.Hour}
	for _, bt := range bases {
		b := newClockBase(bt)
		for _, d := range ds {
			r := reading{b, d}
			if got, want := r.instant(), control.Instant(r.time()); got != want {
				t.Errorf("reading{%v, %v}.instant() = %d, want %d", bt, d, got, want)
			}
			unix, inst := r.unixInstant()
			if want := control.Instant(r.time()); inst != want {
				t.Errorf("reading{%v, %v}.unixInstant() instant = %d, want %d", bt, d, inst, want)
			}
			if r.exact() {
				if want := r.time().UnixNano(); unix != want {
					t.Errorf("reading{%v, %v}.unixInstant() Unix = %d, want %d", bt, d, unix, want)
				}
			}
		}
	}
}

// TestLeaseRead checks that the current instant counted from a grant read
// by the Transport's clock is the one counted from the grant's time.
func TestLeaseRead(t *testing.T) {
	check := func(t *testing.T) {
		var c clock
		r := c.read()
		g := lease{from: r}
		got, ns := g.read()
		// Counted from the grant's time.Time, as before readings: the
		// same instant, up to the time elapsed between the two reads.
		at := r.time()
		want := at.Add(time.Since(at))
		if d := want.Sub(got); d < 0 || d > 100*time.Millisecond {
			t.Errorf("lease.read() = %v, want %v or just before", got, want)
		}
		if ns != control.Instant(got) {
			t.Errorf("lease.read() instant = %d, want %d", ns, control.Instant(got))
		}
		if g.granted() != at {
			t.Errorf("granted() = %v, want %v", g.granted(), at)
		}
	}
	t.Run("real", check)
	t.Run("bubble", func(t *testing.T) { synctest.Test(t, check) })
}

// TestLeaseArrive checks that an arrival is one instant in its three forms:
// its instant is that of its time.Time, and its wall-clock time, made
// without the monotonic reading, is the same instant in the same location,
// whatever the base of the grant's reading and however the lease was
// granted.
func TestLeaseArrive(t *testing.T) {
	check := func(t *testing.T, g *lease) {
		t.Helper()
		var a arrival
		g.arrive(&a)
		full := a.time()
		if a.ns != control.Instant(full) {
			t.Errorf("arrival instant = %d, want %d", a.ns, control.Instant(full))
		}
		if !a.wall.Equal(full) || a.wall.Location() != full.Location() || a.wall.Round(0) != full.Round(0) {
			t.Errorf("arrival wall = %v, want %v", a.wall, full)
		}
		if got, want := a.time(), a.time(); got != want {
			t.Errorf("arrival time() = %v, then %v", got, want)
		}
	}
	now := time.Now()
	for _, bt := range []time.Time{
		now, now.UTC(), now.In(time.FixedZone("x", 3600)), now.Round(0),
		time.Date(2026, 11, 29, 22, 0, 0, 999999999, time.UTC), time.Unix(-1, 0), time.Date(2117, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		check(t, &lease{from: reading{b: newClockBase(bt)}})
	}
	check(t, &lease{at: now})
	check(t, &lease{})
	synctest.Test(t, func(t *testing.T) {
		var c clock
		check(t, &lease{from: c.read()})
	})
}
