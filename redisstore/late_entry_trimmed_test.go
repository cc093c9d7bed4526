package redisstore

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// sameShard returns a key other than k whose entry lives in k's shard.
func sameShard(s *Store, k string) string {
	for i := 0; ; i++ {
		o := "other" + strconv.Itoa(i)
		if s.shard(id(o)) == s.shard(id(k)) {
			return o
		}
	}
}

// A swap taking a lease that Redis ran after the Store gave up on it kept
// its lease, though this process had swapped the key before (doc.go,
// "When Redis fails", allows it only for a first swap): the measure of
// Redis's clock that sets the limit lived in the key's cache entry, which
// fell out once MaxKeys other keys were used since (a crawler's thousands
// of origins; 1 per shard here). A held request's Wait made the entry
// again and read the key, its version and state but not the clock, so the
// next request's swap matched the version at once, with no limit: Redis,
// running it late, kept its lease while its request was told the update
// failed, and the key's one slot was held in every process for the whole
// Lease (10 min 37 s).
func TestLateSwapAfterEntryTrimmed(t *testing.T) {
	waitsSeconds(t)
	rs := startServer(t)
	prefix := testPrefix(t)
	a := New(warmClient(t, rs.addr()), prefix) // Timeout 250ms
	a.MaxKeys = 16                             // one key per shard
	b := New(ownClient(t, rs.addr()), prefix)
	t.Cleanup(func() { a.Close(); b.Close() })
	waitSubscribed(t, a)
	const k = "k"
	probed(t, a, k) // swaps of k: Redis's clock measured
	other := sameShard(a, k)
	probed(t, a, other) // k's entry, and its measure, fall out
	sh := a.shard(id(k))
	sh.mu.Lock()
	_, kept := sh.m[id(k)]
	sh.mu.Unlock()
	if kept {
		t.Fatal("k's entry is still cached")
	}
	// A request held on k waits (a pause, a pace, a turn): its Wait reads
	// the key.
	var gen uint64
	if err := b.Update(t.Context(), k, func(ks *polite.KeyState) { gen = ks.Generation() }); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go a.Wait(wctx, k, gen, time.Now().Add(3*time.Second))
	time.Sleep(50 * time.Millisecond)
	sh.mu.Lock()
	e := sh.m[id(k)]
	waiting := e != nil && e.pins > 0 && e.ver != 0
	sh.mu.Unlock()
	if !waiting {
		t.Fatal("the Wait does not hold k's entry, read from Redis")
	}

	busy := busyRedis(t, rs.addr(), time.Second)
	_, err := acquire(t, a, k, new(control.Lease)) // another request of k starts
	if e := <-busy; e != nil {
		t.Fatal(e)
	}
	if err == nil {
		t.Fatal("the Update while Redis is busy for a second succeeded, want its Timeout")
	}
	time.Sleep(50 * time.Millisecond) // Redis runs the swap
	if h := free(t, b, k); h != "" {
		t.Errorf("after an Update of a key this process swapped before that failed (%v), Redis ran its swap late and kept its lease: the next request in another process is %s", err, h)
	}
}
