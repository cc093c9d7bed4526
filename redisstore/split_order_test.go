package redisstore

import (
	"sync"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// splitCfg allows two requests at a time.
var splitCfg = &control.Config{MaxConcurrency: 2, Lease: 10 * time.Minute}

// splitEdit is edit without t.Fatal, for fns run on the leader's goroutine.
func splitEdit(t *testing.T, ks *polite.KeyState, f func(*control.State)) {
	b, err := ks.MarshalBinary()
	if err != nil {
		t.Error(err)
		return
	}
	var c control.State
	if err := c.UnmarshalBinary(b); err != nil {
		t.Error(err)
		return
	}
	f(&c)
	if b, err = c.MarshalBinary(); err != nil {
		t.Error(err)
		return
	}
	if err := ks.UnmarshalBinary(b); err != nil {
		t.Error(err)
	}
}

func queuedUpdates(s *Store, key string) int {
	kid := id(key)
	sh := s.shard(kid)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e, ok := sh.m[kid]; ok {
		return len(e.queue)
	}
	return 0
}

// Concurrent updates of one key in one process are applied in turn, in
// the order they queued (Store.Update). Three updates queue behind a plug:
// A1 (a request starts: 2nd of 2 slots), R0 (another request ends, freeing
// its slot), A2 (a request starts into the slot R0 freed). The first split
// of such a batch kept the updates of the first's kind wherever they were
// and split again: A2 was requeued ahead of R0, ran before the release
// queued before it, and was held with a slot free.
func TestSplitKeepsOrder(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	a := newStore(t, ownClient(t, addr), prefix)
	const k = "k"
	// The probe, answered after 210ms (a round trip of rampFast or more
	// opens the key to 4 at once; MaxConcurrency holds it to 2). Its swaps
	// measure the server's clock: swaps taking a lease get a limit.
	var p control.Lease
	if err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
		splitEdit(t, ks, func(s *control.State) { s.Acquire(time.Now(), splitCfg, control.Ask{}, &p) })
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(210 * time.Millisecond)
	if err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
		splitEdit(t, ks, func(s *control.State) { s.Release(time.Now(), splitCfg, &p, &control.Outcome{First: true, Bytes: -1}) })
	}); err != nil {
		t.Fatal(err)
	}

	var l0 control.Lease
	granted := false
	if err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
		splitEdit(t, ks, func(s *control.State) { _, granted = s.Acquire(time.Now(), splitCfg, control.Ask{}, &l0) })
	}); err != nil || !granted {
		t.Fatalf("l0: granted %v, %v", granted, err)
	}

	gate := make(chan struct{})
	var once sync.Once
	plugDone := make(chan error, 1)
	go func() {
		plugDone <- a.Update(t.Context(), k, func(*polite.KeyState) { <-gate })
	}()
	waitQueued := func(n int) {
		for deadline := time.Now().Add(2 * time.Second); queuedUpdates(a, k) != n; {
			if time.Now().After(deadline) {
				t.Fatalf("queue of %d, want %d", queuedUpdates(a, k), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(20 * time.Millisecond) // the plug leads, blocked in its fn: its batch taken
	waitQueued(0)

	var l1, l2 control.Lease
	var g1, g2 bool
	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Go(func() {
		errs[0] = a.Update(t.Context(), k, func(ks *polite.KeyState) {
			splitEdit(t, ks, func(s *control.State) { _, g1 = s.Acquire(time.Now(), splitCfg, control.Ask{}, &l1) })
		})
	})
	waitQueued(1)
	wg.Go(func() {
		errs[1] = a.Update(t.Context(), k, func(ks *polite.KeyState) {
			splitEdit(t, ks, func(s *control.State) { s.Release(time.Now(), splitCfg, &l0, &control.Outcome{Bytes: -1}) })
		})
	})
	waitQueued(2)
	wg.Go(func() {
		errs[2] = a.Update(t.Context(), k, func(ks *polite.KeyState) {
			splitEdit(t, ks, func(s *control.State) { _, g2 = s.Acquire(time.Now(), splitCfg, control.Ask{}, &l2) })
		})
	})
	waitQueued(3)
	before := a.Stats()
	once.Do(func() { close(gate) })
	if err := <-plugDone; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	after := a.Stats()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	t.Logf("A1 granted %v, A2 granted %v; swaps for the plug and the batch of 3: %d", g1, g2, after.Swaps-before.Swaps)
	if !g1 {
		t.Fatalf("A1 not granted (2 slots, 1 in flight)")
	}
	if !g2 {
		t.Errorf("A2, queued after the release R0, was held with a slot free: the split ran it before R0 (requeued ahead of it)")
	}
}
