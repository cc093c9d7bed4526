package redisstore

import (
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// "A release is never refused so: late, it still frees its slot" (doc.go,
// "When Redis fails"). A release batched with an update that takes a lease
// (concurrent updates of one key in one process go in one swap) was sent
// with the batch's limit, and refused with it when Redis ran the swap
// late: its lease stayed in Redis, and the key's one slot was held in
// every process for the whole Lease (10 min 36 s).
func TestBatchedReleaseLate(t *testing.T) {
	waitsSeconds(t)
	rs := startServer(t)
	prefix := testPrefix(t)
	a := New(warmClient(t, rs.addr()), prefix) // Timeout 250ms
	b := New(ownClient(t, rs.addr()), prefix)
	t.Cleanup(func() { a.Close(); b.Close() })
	probed(t, a, "k") // measures the server's clock: later swaps taking a lease get a limit

	var l1 control.Lease
	if ok, err := acquire(t, a, "k", &l1); err != nil || !ok {
		t.Fatalf("the request: granted %v, %v", ok, err)
	}

	busy := busyRedis(t, rs.addr(), time.Second)
	// A plug: an Update of the key whose swap waits behind the busy Redis,
	// so that the next two queue behind it and go in one batch.
	plug := make(chan error, 1)
	go func() { plug <- a.Update(t.Context(), "k", func(*polite.KeyState) {}) }()
	time.Sleep(20 * time.Millisecond)
	relErr := make(chan error, 1)
	go func() { relErr <- release(t, a, "k", &l1) }() // the request ends
	time.Sleep(20 * time.Millisecond)
	acqErr := make(chan error, 1)
	go func() { _, err := acquire(t, a, "k", new(control.Lease)); acqErr <- err }() // another starts
	errPlug, errRel, errAcq := <-plug, <-relErr, <-acqErr
	if e := <-busy; e != nil {
		t.Fatal(e)
	}
	t.Logf("plug: %v; release: %v; acquire: %v", errPlug, errRel, errAcq)
	time.Sleep(50 * time.Millisecond) // Redis runs what it was sent
	if h := free(t, b, "k"); h != "" {
		t.Errorf("after a release Redis ran late (batched with an acquire; release error: %v), the next request in another process is %s, want free: a late release still frees its slot", errRel, h)
	}
}

// warmClient is ownClient with connections made ahead, so that a swap sent
// while Redis is busy is written at once (a new connection's handshake
// would wait for Redis, and the swap would never be sent).
func warmClient(t *testing.T, addr string) *redis.Client {
	rdb := ownClient(t, addr)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { rdb.BLPop(t.Context(), time.Second, "polite-test-warm-nothing") })
	}
	wg.Wait()
	return rdb
}
