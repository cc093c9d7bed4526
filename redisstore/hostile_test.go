package redisstore

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// Keys no store could have written (a hostile or broken writer sharing the
// Redis) start over, as a state that does not decode does: none holds a
// key, loses an update or deafens waiters for long.

// A version at or above 2^53, where Lua's numbers lose the ones, made
// "old plus one" write the same version again: a store whose cache held
// the old state swapped over a newer one, and an update was lost. Such a
// key now starts over, and no update is lost after it.
func TestHugeVersionStartsOver(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	a := newStore(t, rdb, prefix)
	b := newStore(t, newClient(t, addr), prefix)
	ctx := t.Context()
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { start(t, st, time.Now(), time.Hour, time.Minute); bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	rkey := a.redisKey(id("k"))
	if err := rdb.HSet(ctx, rkey, "v", "9007199254740992").Err(); err != nil {
		t.Fatal(err)
	}
	// Both stores read the key, which starts over, and bump it once.
	for _, s := range []*Store{a, b} {
		if err := s.Update(ctx, "k", func(st *polite.KeyState) {}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { start(t, st, time.Now(), time.Hour, time.Minute); bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	g0 := generationOf(t, addr, prefix, "k")
	b.Close() // b hears no notification: its cache is stale from here
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	var seen uint64
	if err := b.Update(ctx, "k", func(st *polite.KeyState) { seen = st.Generation(); bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	v, _ := rdb.HGet(ctx, rkey, "v").Result()
	if got := generationOf(t, addr, prefix, "k"); seen != g0+1 || got != g0+2 {
		t.Errorf("b's update ran on generation %d (Redis had %d); final generation %d, want %d: an update was lost (version %s)", seen, g0+1, got, g0+2, v)
	}
}

// "None above 64 KiB is ever read" (doc.go): a state of 32 MiB was read
// whole by every swap that missed the cache (one of 256 MiB could not be
// read within Timeout, and every update failed for as long as it stayed).
// It is replaced, unread.
func TestHugeStateNotRead(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	a := newStore(t, rdb, prefix)
	ctx := t.Context()
	rkey := a.redisKey(id("k"))
	const size = 32 << 20
	if err := rdb.HSet(ctx, rkey, "v", "1", "s", strings.Repeat("x", size)).Err(); err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) })
	runtime.ReadMemStats(&m1)
	if d := m1.TotalAlloc - m0.TotalAlloc; d > 4<<20 || err != nil {
		t.Errorf("Update on a key holding %d MiB allocated %d MiB (err %v), want none above 64 KiB read and the key replaced", size>>20, d>>20, err)
	}
}

// A key whose fields no store wrote starts over, and the next update goes:
//   - a turn queue whose turn ends far in the future blocked every update
//     of the key: each failed with ErrContention after four Timeouts, for
//     as long as the queue stayed;
//   - a version Go parses but Lua compares as another string ("+5") was
//     never matched: about 12,000 stale swaps in a second, then
//     ErrContention, on every update.
func TestHostileFieldsStartOver(t *testing.T) {
	for _, c := range []struct {
		name  string
		field func(version string) []any
	}{
		{"turn", func(string) []any { return []any{"q", "intruder", "qt", "99999999999999999"} }},
		{"version", func(v string) []any { return []any{"v", "+" + v} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := redisAddr(t)
			prefix := testPrefix(t)
			rdb := newClient(t, addr)
			a := newStore(t, rdb, prefix)
			ctx := t.Context()
			if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
				t.Fatal(err)
			}
			rkey := a.redisKey(id("k"))
			v, _ := rdb.HGet(ctx, rkey, "v").Result()
			if err := rdb.HSet(ctx, rkey, c.field(v)...).Err(); err != nil {
				t.Fatal(err)
			}
			before := a.Stats().Swaps
			start := time.Now()
			if err := a.Update(context.Background(), "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
				t.Errorf("Update of a key with a %s no store wrote: %v after %v and %d swaps", c.name, err, time.Since(start).Round(time.Millisecond), a.Stats().Swaps-before)
			}
		})
	}
}

// A notification naming a version no swap writes (MaxInt64) was taken at
// its word: every later notification, and the store's own swaps, looked
// older, and waiters slept to their deadline. It is ignored.
func TestHostileNotificationIgnored(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	a := newStore(t, rdb, prefix)
	b := newStore(t, newClient(t, addr), prefix)
	ctx := t.Context()
	waitSubscribed(t, a)
	var gen uint64
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st); gen = st.Generation() }); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Publish(ctx, prefix+"changed", id("k")+" 9223372036854775807 "+strconv.FormatUint(gen, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	woke := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		a.Wait(ctx, "k", gen, start.Add(2*time.Second))
		woke <- time.Since(start)
	}()
	time.Sleep(50 * time.Millisecond)
	if err := b.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	if d := <-woke; d > 500*time.Millisecond {
		t.Errorf("Wait(gen %d) returned after %v, at its deadline: two later releases (gen %d) did not wake it", gen, d.Round(time.Millisecond), gen+2)
	}
}

// Wait on a key this process has not seen reads it first, bounded by the
// context: with Redis slow, the read failed at the context's deadline a
// moment before the context said so, and Wait returned nil, not the
// context's error (8 of 20 times).
func TestWaitReadEndsWithContext(t *testing.T) {
	rs := startServer(t)
	prefix := testPrefix(t)
	admin := ownClient(t, rs.addr())
	a := New(ownClient(t, rs.addr()), prefix)
	t.Cleanup(func() { a.Close() })
	waitSubscribed(t, a)
	if err := admin.Do(t.Context(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "CLIENT", "UNPAUSE") })
	// A request's Update of another key is out: its connection is busy.
	go a.Update(context.Background(), "busy", func(st *polite.KeyState) { bump(t, st) })
	time.Sleep(10 * time.Millisecond)
	bad := 0
	for i := range 20 {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		start := time.Now()
		err := a.Wait(ctx, "k"+strconv.Itoa(i), 0, time.Time{})
		cancel()
		if err != context.DeadlineExceeded {
			bad++
			t.Logf("Wait with a 20ms context = %v after %v", err, time.Since(start).Round(time.Millisecond))
		}
	}
	if bad > 0 {
		t.Errorf("%d of 20 Waits whose context ended returned something other than context.DeadlineExceeded", bad)
	}
}

// generationOf reads key's generation through a fresh Store.
func generationOf(t *testing.T, addr, prefix, key string) uint64 {
	t.Helper()
	c := newStore(t, newClient(t, addr), prefix)
	var g uint64
	if err := c.Update(t.Context(), key, func(st *polite.KeyState) { g = st.Generation() }); err != nil {
		t.Fatalf("read: %v", err)
	}
	return g
}
