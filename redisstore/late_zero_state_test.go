package redisstore

import (
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// idleCfg is lateCfg with a short idle time: a key unused for 300ms
// expires (its Expiry passes), as any key does after Budget.IdleTTL.
var idleCfg = &control.Config{MaxConcurrency: 1, Lease: 10 * time.Minute, IdleTTL: 300 * time.Millisecond}

// A swap taking a lease from a zero state (the key past its Expiry, or
// absent from Redis), which Redis ran after the Store gave up on it, kept
// its lease, though this process had swapped the key before and held a
// measure of Redis's clock (doc.go, "When Redis fails", allows it only for
// a first swap): the zero state's binary form is empty, and commit set a
// swap's limit only from a state before that was not nil. The key's one
// slot was held in every process for the whole Lease.
func TestLateSwapFromZeroState(t *testing.T) {
	waitsSeconds(t)
	addr := redisAddr(t)
	prefix := testPrefix(t)
	a := newStore(t, newClient(t, addr), prefix) // Timeout 250ms, ContextTimeoutEnabled
	b := newStore(t, newClient(t, addr), prefix)
	const k = "k"
	ctx := t.Context()
	// A first request of k comes and goes: a swap of the key by a, which
	// measures Redis's clock.
	var l control.Lease
	granted := false
	if err := a.Update(ctx, k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { _, granted = s.Acquire(time.Now(), idleCfg, control.Ask{}, &l) })
	}); err != nil || !granted {
		t.Fatalf("first request: granted %v, %v", granted, err)
	}
	if err := a.Update(ctx, k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { s.Release(time.Now(), idleCfg, &l, &control.Outcome{Bytes: -1}) })
	}); err != nil {
		t.Fatal(err)
	}
	sh := a.shard(id(k))
	sh.mu.Lock()
	ahead := sh.m[id(k)].clock.get()
	sh.mu.Unlock()
	if ahead == 0 {
		t.Fatal("no measure of Redis's clock after two swaps of the key")
	}
	// The key goes idle past its Expiry.
	time.Sleep(500 * time.Millisecond)

	// The next request of k, while Redis is busy for a second: its Update
	// fails at Timeout.
	busy := busyRedis(t, addr, time.Second)
	granted = false
	err := a.Update(ctx, k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { _, granted = s.Acquire(time.Now(), idleCfg, control.Ask{}, new(control.Lease)) })
	})
	if e := <-busy; e != nil {
		t.Fatal(e)
	}
	if err == nil {
		t.Fatal("the Update while Redis is busy for a second succeeded, want its Timeout")
	}
	time.Sleep(50 * time.Millisecond) // Redis runs the swap
	var leases int64
	if err := b.Update(ctx, k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { leases = s.Leases() })
	}); err != nil {
		t.Fatal(err)
	}
	if leases != 0 {
		t.Errorf("after an Update that failed (%v), Redis ran its swap late: the key holds %d lease(s) no request will end", err, leases)
	}
	if h := free(t, b, k); h != "" {
		t.Errorf("the next request in another process is %s", h)
	}
}
