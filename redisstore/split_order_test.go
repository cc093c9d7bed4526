package redisstore

import (
	"strconv"
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

// Store.Timeout "bounds each Redis call made on behalf of a request, so
// that a slow or hung Redis holds no request longer than this before its
// Budget falls back to memory, or twice this for an update of a key that
// arrives while another of the same key is being swapped".
//
// Updates of one key queued while another is swapped, starts (taking a
// lease) and ends (releasing one) in turn, and Redis stops answering
// (CLIENT PAUSE): the batch was split into runs of one kind (see split),
// each swapped on its own after the one before failed, a Timeout each,
// and the k-th update of the queue waited k+1 Timeouts (a start 1.5 s, an
// end 1.75 s). Now the starts fail at once and the ends go in one swap,
// sent again until Redis answers (see Store.resend): they succeed once
// the pause ends, and no sooner.
func TestSplitQueueWithinTwoTimeouts(t *testing.T) {
	waitsSeconds(t)
	srv := startServer(t)
	rdb := ownClient(t, srv.addr())
	s := newStore(t, rdb, testPrefix(t)) // Timeout 250 ms
	cfg := &control.Config{MaxConcurrency: 10, Lease: 10 * time.Minute}
	const k = "k"
	upd := func(f func(*control.State)) error {
		return s.Update(t.Context(), k, func(ks *polite.KeyState) { splitEdit(t, ks, f) })
	}
	// The probe, answered after 210 ms; its swaps measure the server's
	// clock, so that swaps taking a lease get a limit (and are split from
	// releases).
	var p control.Lease
	if err := upd(func(c *control.State) { c.Acquire(time.Now(), cfg, control.Ask{}, &p) }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(210 * time.Millisecond)
	if err := upd(func(c *control.State) { c.Release(time.Now(), cfg, &p, &control.Outcome{First: true, Bytes: -1}) }); err != nil {
		t.Fatal(err)
	}
	held := make([]control.Lease, 3) // requests in flight
	for i := range held {
		ok := false
		if err := upd(func(c *control.State) { _, ok = c.Acquire(time.Now(), cfg, control.Ask{}, &held[i]) }); err != nil || !ok {
			t.Fatalf("lease %d: granted %v, %v", i, ok, err)
		}
	}

	open, waitQueued := plug(t, s, k)

	const n = 6 // start, end, start, end, start, end
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		took  = make([]time.Duration, n)
		errs  = make([]error, n)
		start time.Time // when the plug's swap is sent
	)
	for i := range n {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				var l control.Lease
				err = upd(func(c *control.State) { c.Acquire(time.Now(), cfg, control.Ask{}, &l) })
			} else {
				l := held[i/2]
				err = upd(func(c *control.State) { c.Release(time.Now(), cfg, &l, &control.Outcome{Bytes: -1}) })
			}
			mu.Lock()
			took[i], errs[i] = time.Since(start), err
			mu.Unlock()
		})
		waitQueued(i + 1)
	}
	// Redis stops answering.
	const paused = 1500 * time.Millisecond
	if err := rdb.Do(t.Context(), "CLIENT", "PAUSE", strconv.Itoa(int(paused/time.Millisecond)), "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	defer rdb.Do(t.Context(), "CLIENT", "UNPAUSE")
	mu.Lock()
	start = time.Now()
	mu.Unlock()
	open()
	wg.Wait()
	bound := 2*s.timeout() + 100*time.Millisecond
	for i := range n {
		kind := "start"
		if i%2 == 1 {
			kind = "end"
		}
		t.Logf("update %d (%s): %v after the swap before it was sent, err %v", i, kind, took[i].Round(time.Millisecond), errs[i])
	}
	for i := range n {
		switch {
		case i%2 == 0 && took[i] > bound:
			t.Errorf("start %d, queued while another of its key was swapped, returned %v after; Timeout %v, want within twice that", i, took[i].Round(time.Millisecond), s.timeout())
		case i%2 == 1 && (errs[i] != nil || took[i] > paused+bound):
			t.Errorf("end %d: %v after, %v; want it kept once Redis answers, within %v", i, took[i].Round(time.Millisecond), errs[i], paused+bound)
		}
	}
}

// A Forget of a key with no request in flight starts a new incarnation,
// whose Grants count from 0: taken for a start because its Grants changed,
// a Forget sent within a Timeout after a swap of the key went unanswered
// failed at once with errStalled, though Redis answered again, and the
// pause it was to clear stayed in Redis for every process.
func TestForgetSentAfterStall(t *testing.T) {
	srv := startServer(t)
	rdb := ownClient(t, srv.addr())
	s := newStore(t, rdb, testPrefix(t)) // Timeout 250 ms
	cfg := &control.Config{MaxConcurrency: 10, Lease: 10 * time.Minute}
	const k = "k"
	upd := func(f func(*control.State)) error {
		return s.Update(t.Context(), k, func(ks *polite.KeyState) { splitEdit(t, ks, f) })
	}
	// A request granted and ended (Grants 1, none in flight), then a
	// pause of an hour learned (a Retry-After, say).
	var l control.Lease
	if err := upd(func(c *control.State) { c.Acquire(time.Now(), cfg, control.Ask{}, &l) }); err != nil {
		t.Fatal(err)
	}
	if err := upd(func(c *control.State) { c.Release(time.Now(), cfg, &l, &control.Outcome{First: true, Bytes: -1}) }); err != nil {
		t.Fatal(err)
	}
	if err := upd(func(c *control.State) {
		c.PauseUntil(time.Now(), cfg, time.Now().Add(time.Hour), control.ReasonRetryAfter)
	}); err != nil {
		t.Fatal(err)
	}

	// One swap of the key goes unanswered: Redis pauses a moment (a
	// fork, a slow command), past the Timeout.
	if err := rdb.Do(t.Context(), "CLIENT", "PAUSE", "400", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(t.Context(), k, func(*polite.KeyState) {}); err == nil {
		t.Fatal("the swap during CLIENT PAUSE was answered")
	}
	if err := rdb.Do(t.Context(), "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("Redis answers again: %v", err)
	}

	// Redis answers: the operator forgets the key (Budget.Forget).
	ferr := upd(func(c *control.State) { c.Forget(time.Now(), cfg) })

	var pu time.Time
	if err := upd(func(c *control.State) { pu, _ = c.Paused(time.Now()) }); err != nil {
		t.Fatal(err)
	}
	if ferr != nil || !pu.IsZero() {
		t.Errorf("Forget, with Redis answering: err %v; the key is still paused in Redis until %v (%v from now)",
			ferr, pu.Format(time.TimeOnly), time.Until(pu).Round(time.Second))
	}
}

// plug holds the lead of k in s with an Update that waits until open is
// called, so that the Updates made meanwhile queue behind it into one
// batch; waitQueued waits until n are queued. open returns the plug's
// Update's error once it has returned.
func plug(t *testing.T, s *Store, k string) (open func() error, waitQueued func(n int)) {
	t.Helper()
	gate := make(chan struct{})
	plugDone := make(chan error, 1)
	go func() { plugDone <- s.Update(t.Context(), k, func(*polite.KeyState) { <-gate }) }()
	waitQueued = func(n int) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Second); queuedUpdates(s, k) != n; {
			if time.Now().After(deadline) {
				t.Fatalf("queue of %d, want %d", queuedUpdates(s, k), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(20 * time.Millisecond)
	waitQueued(0)
	open = func() error {
		close(gate)
		return <-plugDone
	}
	return open, waitQueued
}
