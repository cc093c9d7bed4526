package polite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// A MemoryStore never evicts a key that requests wait on, and keeps beyond
// MaxKeys no more keys than are waited on: with its 12 oldest keys waited
// on for long (a pause of an hour), 100 new keys still evict one another.
// Looking for a key to evict among the 8 oldest only, it kept every new
// key.
func TestMemoryStoreKeepsWaitedKeysBounded(t *testing.T) {
	ms := &MemoryStore{MaxKeys: 4}
	ctx := context.Background()
	pause := func(ks *KeyState) {
		now := time.Now()
		ks.c.PauseUntil(now, &control.Config{}, now.Add(time.Hour), control.ReasonRetryAfter)
	}
	var waited []string
	for i := range 12 {
		k := fmt.Sprintf("https://w%d.test", i)
		ms.Update(ctx, k, pause)
		sh := ms.shard(splitKey(k))
		sh.mu.Lock()
		sh.m[splitKey(k)].waiters = 1 // as a request waiting on it
		sh.mu.Unlock()
		waited = append(waited, k)
	}
	for i := range 100 {
		ms.Update(ctx, fmt.Sprintf("https://o%d.test", i), pause)
		if n := ms.count.Load(); n > 4+12 {
			t.Fatalf("after %d new keys, %d kept; want at most 16 (4, and the 12 waited on)", i+1, n)
		}
	}
	for _, k := range waited {
		sh := ms.shard(splitKey(k))
		sh.mu.Lock()
		_, ok := sh.m[splitKey(k)]
		sh.mu.Unlock()
		if !ok {
			t.Errorf("%s, waited on, was evicted", k)
		}
	}
}

// A Wait whose end had passed returned without taking back its count as a
// waiter: the key was never evicted again, and MaxKeys no longer bounded
// the store (a hold's end passes between an Acquire and its wait under
// load).
func TestWaitPastUntilKeepsKeyEvictable(t *testing.T) {
	ms := &MemoryStore{MaxKeys: 2}
	ctx := context.Background()
	const k = "https://api.test"
	var gen uint64
	ms.Update(ctx, k, func(ks *KeyState) {
		now := time.Now()
		ks.c.PauseUntil(now, &control.Config{}, now.Add(time.Hour), control.ReasonRetryAfter)
	})
	ms.Update(ctx, k, func(ks *KeyState) { gen = ks.Generation() })
	for range 3 {
		if err := ms.Wait(ctx, k, gen, time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		ms.Update(ctx, fmt.Sprintf("https://o%d.test", i), func(ks *KeyState) {
			now := time.Now()
			ks.c.PauseUntil(now, &control.Config{}, now.Add(time.Hour), control.ReasonRetryAfter)
		})
	}
	sh := ms.shard(splitKey(k))
	sh.mu.Lock()
	e := sh.m[splitKey(k)]
	sh.mu.Unlock()
	if e != nil {
		t.Errorf("the oldest key kept after 50 newer with MaxKeys 2, counted as waited on by %d Waits that had already ended", e.waiters)
	}
}
