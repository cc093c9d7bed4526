package redisstore

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// A notification's state was kept whatever its size, as the cached state
// of a key this process uses: a publisher could make each cost up to what
// Redis buffers for a subscriber (32 MB). No store sends one past
// maxNotifyState, and none past it is kept.
func TestNotificationStateBounded(t *testing.T) {
	rdb, a, _ := twoStores(t)
	ctx := t.Context()
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	ver := time.Now().UnixMicro() + 1000
	huge := strings.Repeat("x", 1<<20)
	if err := rdb.Publish(ctx, a.channel, id("k")+" "+strconv.FormatInt(ver, 10)+" 1 "+huge).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	kid := id("k")
	sh := a.shard(kid)
	sh.mu.Lock()
	n := len(sh.m[kid].state)
	sh.mu.Unlock()
	if n > maxNotifyState {
		t.Errorf("a notification's state of %d bytes is kept; no store sends one past %d", n, maxNotifyState)
	}
}

// A notification naming the generation a waiter waits on, at a version
// within maxAhead past the server's clock (what a hostile publisher can
// send), raised the version notifications were compared with: every real
// notification from another store was older, and dropped, and the waiter
// slept to its deadline while the key changed twice.
func TestSameGenerationNotificationDeafensNone(t *testing.T) {
	rdb, a, b := twoStores(t)
	ctx := t.Context()
	var gen uint64
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st); gen = st.Generation() }); err != nil {
		t.Fatal(err)
	}
	ver := time.Now().UnixMicro() + maxAhead/2
	if err := rdb.Publish(ctx, a.channel, id("k")+" "+strconv.FormatInt(ver, 10)+" "+strconv.FormatUint(gen, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	woke := waitAtMost(a, "k", gen, 2*time.Second)
	time.Sleep(50 * time.Millisecond)
	for range 2 {
		if err := b.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
			t.Fatal(err)
		}
	}
	if d := <-woke; d > 500*time.Millisecond {
		t.Errorf("Wait(gen %d) returned after %v: two changes by another store did not wake it", gen, d.Round(time.Millisecond))
	}
}

// A notification naming a version far past the server's clock is ignored
// by a Store that has not measured the key's clock by a swap too (it only
// read the key, to Wait): it took a version of 2^53-1 at its word and woke
// the key's waiters.
func TestFarVersionNotificationWithoutMeasure(t *testing.T) {
	rdb, a, b := twoStores(t)
	ctx := t.Context()
	var gen uint64
	if err := b.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st); gen = st.Generation() }); err != nil {
		t.Fatal(err)
	}
	woke := waitAtMost(a, "k", gen, 1500*time.Millisecond)
	time.Sleep(100 * time.Millisecond) // a read the key: it waits
	if err := rdb.Publish(ctx, a.channel, id("k")+" "+strconv.FormatInt(maxVersion-1, 10)+" "+strconv.FormatUint(gen+7, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	if d := <-woke; d < time.Second {
		t.Errorf("Wait(gen %d) returned after %v: woken by a notification naming version 2^53-1, which the package doc says is ignored", gen, d.Round(time.Millisecond))
	}
}
