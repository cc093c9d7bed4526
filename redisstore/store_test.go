package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/politehttp/polite"
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
