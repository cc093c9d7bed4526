package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

func TestUpdateSharedAcrossStores(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	a := newStore(t, newClient(t, addr), prefix)
	b := newStore(t, newClient(t, addr), prefix)
	ctx := t.Context()
	if err := a.Update(ctx, "https://api.example", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	var got uint64
	if err := b.Update(ctx, "https://api.example", func(st *polite.KeyState) { got = st.Generation() }); err != nil {
		t.Fatal(err)
	}
	if got != 1 {
		t.Errorf("second store read generation %d, want 1", got)
	}
}

// Updates from many goroutines of several stores are atomic: none is lost.
func TestUpdateAtomic(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	const stores, workers, each = 3, 8, 25
	var wg sync.WaitGroup
	ss := make([]*Store, stores)
	for i := range ss {
		ss[i] = newStore(t, newClient(t, addr), prefix)
	}
	for _, s := range ss {
		for range workers {
			wg.Go(func() {
				for range each {
					if err := s.Update(t.Context(), "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	var got uint64
	ss[0].Update(t.Context(), "k", func(st *polite.KeyState) { got = st.Generation() })
	if want := uint64(stores * workers * each); got != want {
		t.Errorf("generation = %d after %d updates that add one", got, want)
	}
}

// With the latest state known, an update is one round trip; with a stale
// one, two (the failed swap returns the current state).
func TestUpdateRoundTrips(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	ra, rb := newClient(t, addr), newClient(t, addr)
	var ca counter
	ra.AddHook(&ca)
	a := newStore(t, ra, prefix)
	b := newStore(t, rb, prefix)
	ctx := t.Context()
	update := func(s *Store) {
		t.Helper()
		if err := s.Update(ctx, "k", func(st *polite.KeyState) { start(t, st, time.Now(), time.Minute, time.Minute) }); err != nil {
			t.Fatal(err)
		}
	}
	count := func(what string, want int64, f func()) {
		t.Helper()
		n := ca.n.Load()
		f()
		if d := ca.n.Load() - n; d != want {
			t.Errorf("%s: %d round trips, want %d", what, d, want)
		}
	}
	waitSubscribed(t, a)
	count("first update of an absent key", 1, func() { update(a) })
	count("update after its own", 1, func() { update(a) })
	update(b)
	time.Sleep(50 * time.Millisecond) // b's write is published, with its state
	count("update after another store's, notified", 1, func() { update(a) })
	a.Close() // no more notifications
	update(b)
	count("update after another store's, not notified", 2, func() { update(a) })
}

func TestWaitWokenByOtherStore(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	a := newStore(t, newClient(t, addr), prefix)
	b := newStore(t, newClient(t, addr), prefix)
	ctx := t.Context()
	var gen uint64
	a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st); gen = st.Generation() })
	waitSubscribed(t, a)
	// The first wait after the subscription started may return at once.
	a.Update(ctx, "k", func(st *polite.KeyState) { gen = st.Generation() })

	woke := make(chan time.Time)
	go func() {
		if err := a.Wait(ctx, "k", gen, time.Time{}); err != nil {
			t.Error(err)
		}
		woke <- time.Now()
	}()
	select {
	case <-woke:
		t.Fatal("Wait returned before any change")
	case <-time.After(100 * time.Millisecond):
	}
	start := time.Now()
	b.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) })
	select {
	case at := <-woke:
		if d := at.Sub(start); d > 50*time.Millisecond {
			t.Errorf("woken %v after the release, want within 50ms", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Wait not woken by another store's release")
	}
}

// A change between the Update that returned gen and the Wait is not lost.
func TestWaitNoLostWake(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	a := newStore(t, newClient(t, addr), prefix)
	b := newStore(t, newClient(t, addr), prefix)
	ctx := t.Context()
	waitSubscribed(t, a)
	var gen uint64
	a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st); gen = st.Generation() })
	b.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) })
	time.Sleep(20 * time.Millisecond) // the notification arrives before the Wait
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := a.Wait(ctx, "k", gen, time.Time{}); err != nil {
		t.Errorf("Wait after a missed change = %v, want nil at once", err)
	}
}

func TestWaitUntilAndContext(t *testing.T) {
	addr := redisAddr(t)
	a := newStore(t, newClient(t, addr), testPrefix(t))
	ctx := t.Context()
	waitSubscribed(t, a)
	var gen uint64
	a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st); gen = st.Generation() })
	start := time.Now()
	if err := a.Wait(ctx, "k", gen, start.Add(80*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 80*time.Millisecond || d > 500*time.Millisecond {
		t.Errorf("Wait until +80ms returned after %v", d)
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := a.Wait(cctx, "k", gen, time.Time{}); err != context.DeadlineExceeded {
		t.Errorf("Wait with a context ending = %v, want %v", err, context.DeadlineExceeded)
	}
}

// Keys live in Redis until the state's expiry plus the margin, and a state
// left zero is deleted.
func TestExpiryAndDelete(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	a := newStore(t, rdb, prefix)
	a.ExpiryMargin = 5 * time.Second
	ctx := t.Context()
	a.Update(ctx, "k", func(st *polite.KeyState) { start(t, st, time.Now(), time.Minute, 30*time.Second) })
	rkey := a.redisKey(id("k"))
	ttl, err := rdb.PTTL(ctx, rkey).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl < 64*time.Second || ttl > 65*time.Second {
		t.Errorf("PTTL = %v, want about 65s", ttl)
	}
	a.Update(ctx, "k", func(st *polite.KeyState) { *st = polite.KeyState{} })
	if n, _ := rdb.Exists(ctx, rkey).Result(); n != 0 {
		t.Errorf("a zero state is kept in Redis")
	}
	// The key comes back with a version above every earlier one.
	a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) })
	var got uint64
	newStore(t, newClient(t, addr), prefix).Update(ctx, "k", func(st *polite.KeyState) { got = st.Generation() })
	if got != 1 {
		t.Errorf("after re-creation read generation %d, want 1", got)
	}
}

// The key never appears in Redis: only a hash of it.
func TestKeyHashed(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	a := newStore(t, rdb, prefix)
	const secret = "Bearer sk-live-0123456789"
	a.Update(t.Context(), secret, func(st *polite.KeyState) { bump(t, st) })
	keys, _ := rdb.Keys(t.Context(), prefix+"*").Result()
	if len(keys) != 1 {
		t.Fatalf("keys under the prefix: %q, want one", keys)
	}
	if want := prefix + "{" + id(secret) + "}"; keys[0] != want {
		t.Errorf("key %q, want %q", keys[0], want)
	}
}

func waitSubscribed(t *testing.T, s *Store) {
	t.Helper()
	s.init()
	s.start()
	deadline := time.Now().Add(5 * time.Second)
	for !s.subscribed.Load() {
		if time.Now().After(deadline) {
			t.Fatal("store not subscribed after 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// A state past its expiry is given to fn as zero, as the in-memory store
// forgets it.
func TestExpiredStateIsZero(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	a := newStore(t, newClient(t, addr), prefix)
	ctx := t.Context()
	a.Update(ctx, "k", func(st *polite.KeyState) {
		start(t, st, time.Now().Add(-3*time.Minute), time.Minute, time.Minute)
	})
	b := newStore(t, newClient(t, addr), prefix)
	b.Update(ctx, "k", func(st *polite.KeyState) {
		if b, _ := st.MarshalBinary(); len(b) != 0 {
			t.Errorf("an expired state was read as %d bytes, want the zero state", len(b))
		}
	})
}

// Close ends the Store's one goroutine; updates still work after it.
func TestClose(t *testing.T) {
	addr := redisAddr(t)
	s := New(newClient(t, addr), testPrefix(t))
	waitSubscribed(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	default:
		t.Fatal("the subscription goroutine still runs after Close")
	}
	if s.subscribed.Load() {
		t.Error("subscribed after Close")
	}
	if err := s.Update(t.Context(), "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Errorf("Update after Close = %v", err)
	}
}

// A swap is bounded by Timeout: when Redis is busy (a slow command, a
// script, a fork) for longer, the Store gives up and Update returns an
// error, and Redis runs the swap when it gets to it. Before, the swap then
// took its lease, kept in Redis with its request gone to the fallback: the
// key's one slot was held for the whole Lease (10 minutes here) in every
// process. A swap that runs after its caller gave up changes nothing.
func TestLateSwapTakesNoLease(t *testing.T) {
	rs := startServer(t)
	prefix := testPrefix(t)
	admin := redis.NewClient(&redis.Options{Addr: rs.addr(), ReadTimeout: 10 * time.Second})
	defer admin.Close()
	a := New(ownClient(t, rs.addr()), prefix) // Timeout 250ms
	b := New(ownClient(t, rs.addr()), prefix)
	t.Cleanup(func() { a.Close(); b.Close() })
	ctx := t.Context()
	cfg := &control.Config{MaxConcurrency: 1, Lease: 10 * time.Minute}
	// A first request came and went: the key is known, the script loaded.
	if err := a.Update(ctx, "k", func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) {
			var l control.Lease
			if _, ok := s.Acquire(time.Now(), cfg, control.Ask{}, &l); ok {
				s.Release(time.Now(), cfg, &l, &control.Outcome{Bytes: -1})
			}
		})
	}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Ping(ctx).Err(); err != nil { // its connection is up
		t.Fatal(err)
	}
	busy := make(chan error, 1)
	go func() { // Redis is busy for a second
		busy <- admin.Eval(context.Background(), `
local t = redis.call('TIME')
local t0 = t[1] * 1000000 + t[2]
repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] > t0 + 1000000
return 1`, nil).Err()
	}()
	time.Sleep(100 * time.Millisecond)
	granted := false
	err := a.Update(ctx, "k", func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) {
			_, granted = s.Acquire(time.Now(), cfg, control.Ask{}, new(control.Lease))
		})
	})
	if err == nil {
		t.Fatal("Update while Redis is busy for a second succeeded, want its Timeout")
	}
	if e := <-busy; e != nil {
		t.Fatal(e)
	}
	t.Logf("Update = %v (its fn granted: %v)", err, granted)
	var held bool
	var h control.Hold
	if err := b.Update(ctx, "k", func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) {
			var ok bool
			h, ok = s.Acquire(time.Now(), cfg, control.Ask{}, new(control.Lease))
			held = !ok
		})
	}); err != nil {
		t.Fatal(err)
	}
	if held {
		t.Errorf("an Update that failed (%v) kept its lease in Redis: the next request is held (reason %v) for %v",
			err, h.Reason, time.Until(h.Wake()).Round(time.Second))
	}
}
