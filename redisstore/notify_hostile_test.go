package redisstore

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
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
	waitsSeconds(t)
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

// A notification naming the key's version and generation with an older
// state of it (a replay of an earlier notification), at a time this
// process held an older state still (the key's last state, past 4 KiB,
// was notified without its bytes), was taken as the key's state at that
// version: the next Update ran on the replay and its swap, expecting that
// version, wrote what it made of it over Redis's state, eight quotas and
// their start logs lost. A state sent must be of the generation named,
// and not written before the one held.
func TestReplayedNotificationStateNotWritten(t *testing.T) {
	rdb, a, b := twoStores(t)
	ctx := t.Context()
	rkey := a.redisKey(id("k"))

	// An early state of the key, small enough to be sent with its
	// notification: what a hostile subscriber records and replays.
	var old []byte
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st); old, _ = st.MarshalBinary() }); err != nil {
		t.Fatal(err)
	}
	if err := b.Update(ctx, "k", func(st *polite.KeyState) {}); err != nil {
		t.Fatal(err)
	}

	// a states eight quotas and logs their starts: a state past 4 KiB,
	// notified without its bytes.
	var gen uint64
	var size int
	if err := a.Update(ctx, "k", func(st *polite.KeyState) {
		largeState(t, st)
		gen = st.Generation()
		bs, _ := st.MarshalBinary()
		size = len(bs)
	}); err != nil {
		t.Fatal(err)
	}
	if size <= maxNotifyState {
		t.Fatalf("the large state is %d bytes, want more than %d", size, maxNotifyState)
	}
	time.Sleep(50 * time.Millisecond) // b hears the new version and generation

	// The replay: the key's current version (as every notification shows
	// it) and generation, with the old state.
	ver, err := rdb.HGet(ctx, rkey, "v").Result()
	if err != nil {
		t.Fatal(err)
	}
	msg := id("k") + " " + ver + " " + strconv.FormatUint(gen, 10) + " " + string(old)
	if err := rdb.Publish(ctx, a.channel, msg).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)

	var seen uint64
	if err := b.Update(ctx, "k", func(st *polite.KeyState) { seen = st.Generation(); bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	s, _ := rdb.HGet(ctx, rkey, "s").Result()
	got := generationOf(t, redisAddr(t), a.prefix, "k")
	if seen != gen || got != gen+1 || len(s) < size {
		t.Errorf("after a replayed notification (version %s, generation %d, a state of generation 1), b's Update ran on generation %d, "+
			"not the %d Redis held, and Redis now holds generation %d in %d bytes (want %d, at least %d bytes): "+
			"a's update, with its eight quotas, was overwritten", ver, gen, seen, gen, got, len(s), gen+1, size)
	}
}

// largeState makes ks a state past 4 KiB, as an origin stating eight
// quotas with long names and partition keys does after 120 requests.
func largeState(t testing.TB, ks *polite.KeyState) {
	now := time.Now()
	cfg := &control.Config{}
	var qs []parse.Quota
	for i := range 8 {
		qs = append(qs, parse.Quota{Policy: fmt.Sprintf("%d%s", i, strings.Repeat("p", 120)), Partition: []byte(strings.Repeat("k", 100)),
			Unit: "requests", Limit: 128, Window: time.Hour, Remaining: 127, Reset: time.Hour, Dialect: "ietf"})
	}
	edit(t, ks, func(s *control.State) {
		for i := range 120 {
			at := now.Add(time.Duration(i) * time.Millisecond)
			var l control.Lease
			if _, ok := s.Acquire(at, cfg, control.Ask{}, &l); ok {
				s.Release(at.Add(time.Microsecond), cfg, &l, &control.Outcome{Quotas: qs})
			}
		}
	})
}
