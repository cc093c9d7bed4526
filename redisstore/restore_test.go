package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/redis/go-redis/v9"
)

// retry runs f until it returns nil (a client's pooled connections die
// with a restarted server), for at most 10s.
func retry(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ownClient(t *testing.T, addr string) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1,
		DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// restoreOlder leaves the key "k" at a version that store b has already
// seen, with a state older than b's: Redis restarts from a snapshot (RDB,
// AOF everysec, or an async replica promoted by a failover) taken before
// b's last write. It returns the stores a and b.
func restoreOlder(t *testing.T) (rs *server, a, b *Store) {
	rs = startServer(t)
	prefix := testPrefix(t)
	ra, rb := ownClient(t, rs.addr()), ownClient(t, rs.addr())
	a, b = New(ra, prefix), New(rb, prefix)
	t.Cleanup(func() { a.Close(); b.Close() })
	ctx := t.Context()
	waitSubscribed(t, a)
	waitSubscribed(t, b)
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil { // gen 1, version V
		t.Fatal(err)
	}
	if err := ra.Save(ctx).Err(); err != nil { // snapshot: gen 1 at V
		t.Fatal(err)
	}
	if err := b.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil { // gen 2 at V+1
		t.Fatal(err)
	}
	rs.stop() // crash: the write after the snapshot is lost
	rs.start()
	return rs, a, b
}

// A restart that restores an older snapshot brings older versions back:
// the next write's version, from the server's clock, is above any a store
// cached, so the compare-and-swap refuses a stale cache. The old one plus
// one reached again a version a store had cached with another state, and
// the swap accepted it: an update was lost (ABA).
func TestRestoredSnapshotLosesNoUpdate(t *testing.T) {
	_, a, b := restoreOlder(t)
	ctx := t.Context()
	// a adds two (gen 1 -> 3), written at V+1: the version b holds for
	// its own lost gen-2 state.
	retry(t, "a.Update", func() error {
		return a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st); bump(t, st) })
	})
	// b adds one: it must see gen 3.
	var seen uint64
	retry(t, "b.Update", func() error {
		return b.Update(ctx, "k", func(st *polite.KeyState) { seen = st.Generation(); bump(t, st) })
	})
	var got uint64
	c := New(ownClient(t, b.rdb.(*redis.Client).Options().Addr), b.prefix)
	defer c.Close()
	retry(t, "c.Update", func() error {
		return c.Update(ctx, "k", func(st *polite.KeyState) { got = st.Generation() })
	})
	if seen != 3 || got != 4 {
		t.Errorf("b's update ran on generation %d (Redis had 3); final generation %d, want 4: a's update was lost", seen, got)
	}
}

// After such a restart, a waiter whose generation Redis no longer has is
// woken by another store's release. Its notification's version was one
// the waiter's store had seen already, and was dropped.
func TestRestoredSnapshotWakes(t *testing.T) {
	waitsSeconds(t)
	_, a, b := restoreOlder(t)
	ctx := t.Context()
	// b's subscription is back (a read of the key will be made).
	deadline := time.Now().Add(10 * time.Second)
	for !b.subscribed.Load() || !a.subscribed.Load() {
		if time.Now().After(deadline) {
			t.Fatal("not subscribed again")
		}
		time.Sleep(5 * time.Millisecond)
	}
	woke := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		woke <- b.Wait(wctx, "k", 2, time.Time{}) // the hold b was given: gen 2
	}()
	time.Sleep(200 * time.Millisecond)
	// a releases twice: gen 1 -> 3, which must wake b's waiter.
	retry(t, "a.Update", func() error {
		return a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st); bump(t, st) })
	})
	released := time.Now()
	if err := <-woke; err != nil {
		t.Errorf("Wait(gen 2) = %v %v after another store moved the key to generation 3; want nil at once", err, time.Since(released).Round(time.Millisecond))
	}
}

// Wait on a key this process has not seen reads it from Redis first; that
// read ends at until, as the wait does. It was bounded by Timeout only:
// with Redis slow to answer, Wait returned Timeout late.
func TestWaitReadBoundedByUntil(t *testing.T) {
	waitsSeconds(t)
	a := pausedStore(t) // Timeout left at its default, 250ms
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	err := a.Wait(ctx, "k", 0, start.Add(50*time.Millisecond))
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("Wait(until +50ms, ctx canceled at +50ms) returned %v after %v", err, d.Round(time.Millisecond))
	}
}
