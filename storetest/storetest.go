// Package storetest tests implementations of [polite.Store], in the manner
// of [testing/fstest.TestFS]: a store that passes [TestStore] can back a
// [polite.Budget].
//
// The suite runs in real time, with no fake clock, so that a store whose
// states live elsewhere (expiring in Redis, say) can run it unchanged; the
// states it writes are driven at instants near [time.Now], and every wait
// in it is short.
package storetest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/internal/control/controltest"
)

// How long the suite waits for a wake it expects, and how early or late a
// store may return from a wait that should last until an instant: a
// Budget paces by those instants, so a store that returns a second late
// starts every paced request a second late.
const (
	wakeWithin = 5 * time.Second
	early      = 5 * time.Millisecond
	late       = time.Second
)

// TestStore runs the conformance suite on the stores newStore returns, one
// per subtest; newStore may register cleanups with t. Keys are unique to
// each run (they start with "storetest/"), so a store shared between runs
// may be used.
//
// It checks that:
//   - a key never written reads as the zero KeyState;
//   - Update keeps what its function leaves, and states round-trip
//     through their binary form, one of several KiB too; a state is kept
//     until its Expiry, the one of its latest write, not of its first;
//   - keys are kept apart, whatever their case, bytes (NUL, bytes that
//     are not UTF-8) and length (4 KiB, differing only at their end): a
//     custom key reaches a store verbatim;
//   - Update with its context ended returns an error, or keeps what its
//     function left;
//   - concurrent Updates from many goroutines, on one key and on several,
//     lose no update, and none fails;
//   - an Update that makes Generation grow wakes the key's waiters, those
//     of a key that had no state too, and a wake between the Update and
//     the call to Wait, or as Wait starts, is not lost;
//   - Wait returns at its deadline (not before, nor a second after), at
//     once for a deadline already past, and with ctx.Err() when its
//     context ends; Updates that leave Generation as it was do not end it;
//   - leases in the state expire: a slot held by a request that never
//     ends is free again after its lease;
//   - every step table of the controller (one per pacing rule) replayed
//     through the store gives the same results as on a bare state.
//
// A store shared by several processes is checked across them by
// [TestSharedStore] too.
func TestStore(t *testing.T, newStore func(t *testing.T) polite.Store) {
	run := fmt.Sprintf("storetest/%d/", time.Now().UnixNano())
	key := func(t *testing.T) string { return run + t.Name() }
	tests := []struct {
		name string
		f    func(t *testing.T, st polite.Store, key string)
	}{
		{"ZeroState", testZeroState},
		{"Keeps", testKeeps},
		{"KeepsLargeState", testKeepsLargeState},
		{"KeepsUntilExpiry", testKeepsUntilExpiry},
		{"KeepsUntilLaterExpiry", testKeepsUntilLaterExpiry},
		{"KeysApart", testKeysApart},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"WakesWaiters", testWakesWaiters},
		{"WakesWaitersOfNewKey", testWakesWaitersOfNewKey},
		{"WakeNotLost", testWakeNotLost},
		{"WakeAsWaitStarts", testWakeAsWaitStarts},
		{"WaitUntil", testWaitUntil},
		{"WaitContext", testWaitContext},
		{"WaitNoGrowth", testWaitNoGrowth},
		{"UpdateEndedContext", testUpdateEndedContext},
		{"LeasesExpire", testLeasesExpire},
		{"Tables", testTables},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.f(t, newStore(t), key(t))
		})
	}
}

// apply runs f on the controller state ks holds, through its binary form
// (the way into the controller from outside package polite), and stores
// the result back in ks.
func apply[R any](t *testing.T, ks *polite.KeyState, f func(*control.State) R) R {
	b, err := ks.MarshalBinary()
	if err != nil {
		t.Errorf("KeyState.MarshalBinary: %v", err)
	}
	var s control.State
	if err := s.UnmarshalBinary(b); err != nil {
		t.Errorf("the stored state does not read back: %v", err)
	}
	r := f(&s)
	if b, err = s.MarshalBinary(); err != nil {
		t.Errorf("MarshalBinary: %v", err)
	}
	if err := ks.UnmarshalBinary(b); err != nil {
		t.Errorf("KeyState.UnmarshalBinary: %v", err)
	}
	return r
}

// update calls st.Update with a timeout, failing the test on error.
func update(t *testing.T, st polite.Store, key string, fn func(*polite.KeyState)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wakeWithin)
	defer cancel()
	if err := st.Update(ctx, key, fn); err != nil {
		t.Fatalf("Update(%q): %v", key, err)
	}
}

// bump makes key's Generation grow (the release of a lease the state never
// granted) and returns the new one.
func bump(t *testing.T, st polite.Store, key string, now time.Time) uint64 {
	t.Helper()
	var gen uint64
	update(t, st, key, func(ks *polite.KeyState) {
		gen = apply(t, ks, func(s *control.State) uint64 {
			s.Release(now, &control.Config{}, &control.Lease{}, &control.Outcome{})
			return s.Generation()
		})
	})
	return gen
}

// read returns key's state as the store holds it.
func read(t *testing.T, st polite.Store, key string) []byte {
	t.Helper()
	var b []byte
	update(t, st, key, func(ks *polite.KeyState) {
		var err error
		if b, err = ks.MarshalBinary(); err != nil {
			t.Errorf("MarshalBinary: %v", err)
		}
	})
	return b
}

func testZeroState(t *testing.T, st polite.Store, key string) {
	update(t, st, key, func(ks *polite.KeyState) {
		b, err := ks.MarshalBinary()
		if err != nil || len(b) != 0 || ks.Generation() != 0 || !ks.Expiry().IsZero() {
			t.Errorf("a key never written: state %x (err %v), Generation %d, Expiry %v; want the zero KeyState", b, err, ks.Generation(), ks.Expiry())
		}
	})
}

func testKeeps(t *testing.T, st polite.Store, key string) {
	now := time.Now()
	cfg := &control.Config{}
	var want []byte
	update(t, st, key, func(ks *polite.KeyState) {
		apply(t, ks, func(s *control.State) bool {
			_, ok := s.Acquire(now, cfg, control.Ask{Custom: true}, new(control.Lease))
			return ok
		})
		want, _ = ks.MarshalBinary()
	})
	if len(want) == 0 {
		t.Fatal("a state after one request encodes as empty")
	}
	if got := read(t, st, key); string(got) != string(want) {
		t.Errorf("state read back = %x, want %x as written", got, want)
	}
	var exp time.Time
	update(t, st, key, func(ks *polite.KeyState) { exp = ks.Expiry() })
	if !exp.After(now) {
		t.Errorf("Expiry = %v, want after the request at %v", exp, now)
	}
}

// testKeepsUntilExpiry checks that a state outlives the calls to the
// store: kept until its Expiry (keptTTL away, by an IdleTTL of that), it
// is there a second after it was written. A store that forgot it sooner
// (a TTL in the wrong unit: the minutes to the Expiry taken as seconds)
// would let the key start its quota again within its window.
func testKeepsUntilExpiry(t *testing.T, st polite.Store, key string) {
	var gen uint64
	update(t, st, key, func(ks *polite.KeyState) {
		gen = apply(t, ks, func(s *control.State) uint64 {
			s.Release(time.Now(), &control.Config{IdleTTL: keptTTL}, &control.Lease{}, &control.Outcome{})
			return s.Generation()
		})
	})
	keptPast(t, st, key, gen, "forgotten before its Expiry")
}

// keptPast checks that key's state, of Generation gen and an Expiry at
// least twice keptFor away, is still there keptFor later; why says what a
// store that fails did.
func keptPast(t *testing.T, st polite.Store, key string, gen uint64, why string) {
	t.Helper()
	var exp time.Time
	update(t, st, key, func(ks *polite.KeyState) { exp = ks.Expiry() })
	if time.Until(exp) < 2*keptFor {
		t.Fatalf("Expiry %v, want at least %v away", exp, 2*keptFor)
	}
	time.Sleep(keptFor)
	var got uint64
	update(t, st, key, func(ks *polite.KeyState) { got = ks.Generation() })
	if got != gen {
		t.Errorf("after %v, the state has Generation %d, want %d: %s (%v)", keptFor, got, gen, why, exp)
	}
}

// testKeepsUntilLaterExpiry checks that a state written first with an
// Expiry a second away, then with one keptTTL away, is kept past the
// first: a store that keeps a key's first time to live (SET ... KEEPTTL)
// forgot a pause, or a quota's window, written after a short idle expiry.
func testKeepsUntilLaterExpiry(t *testing.T, st polite.Store, key string) {
	for _, ttl := range []time.Duration{time.Second, keptTTL} {
		update(t, st, key, func(ks *polite.KeyState) {
			apply(t, ks, func(s *control.State) bool {
				s.Release(time.Now(), &control.Config{IdleTTL: ttl}, &control.Lease{}, &control.Outcome{})
				return true
			})
		})
	}
	var gen uint64
	update(t, st, key, func(ks *polite.KeyState) { gen = ks.Generation() })
	keptPast(t, st, key, gen, "forgotten at the Expiry of its first write, not of its latest")
}

// keptFor is how long testKeepsUntilExpiry leaves a state alone.
const keptFor = 1100 * time.Millisecond

// keptTTL is the IdleTTL of the states kept past keptFor: under a minute,
// so that a store taking the minutes to their Expiry for seconds, rounded
// either way, keeps them a second at most (90 s, rounded up to two
// minutes, kept them 2 s, past keptFor).
const keptTTL = 50 * time.Second

func testKeysApart(t *testing.T, st polite.Store, key string) {
	// Two long keys that differ only at their end: a store that keeps a
	// prefix of a key (memcached's 250 bytes, a fixed-width column) keeps
	// them as one.
	long := key + "/" + strings.Repeat("k", 512)
	// A custom key (Transport.Key) reaches the store verbatim: of any
	// length (a header's value, kilobytes) and any bytes (NUL, bytes
	// that are not UTF-8, which a SQL text column refuses). A store
	// that refuses such a key fails every request of it.
	longer := key + "/" + strings.Repeat("k", 4<<10)
	keys := []string{key + "/a", key + "/A", key + "/a:b", key + "/a://b", key + "/ä", long, long + "/b",
		key + "/\x00", key + "/\xff", longer, longer + "/b"}
	for i, k := range keys {
		for range i + 1 {
			bump(t, st, k, time.Now())
		}
	}
	for i, k := range keys {
		var gen uint64
		update(t, st, k, func(ks *polite.KeyState) { gen = ks.Generation() })
		if gen != uint64(i+1) {
			t.Errorf("key %q: Generation %d, want %d (keys are kept apart)", k, gen, i+1)
		}
	}
}

// testConcurrentUpdates checks that concurrent Updates lose none, and
// that none fails: the Store contract lets an Update fail under contention
// (its state "may not have been kept"), but the suite holds a store to
// none at this load, 16 goroutines on one key. (Counting only the Updates
// that returned nil let a store that writes over another's Update on a
// lost swap and then fails, or one that fails every contended Update,
// pass.)
func testConcurrentUpdates(t *testing.T, st polite.Store, key string) {
	const goroutines, each = 16, 25
	keys := []string{key + "/hot", key + "/1", key + "/2", key + "/3"}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range each {
				// Every goroutine on the hot key; each also on one other.
				for _, k := range []string{keys[0], keys[1+g%3]} {
					ctx, cancel := context.WithTimeout(context.Background(), 4*wakeWithin)
					err := st.Update(ctx, k, func(ks *polite.KeyState) {
						// Another goroutine runs between the read
						// and the write, on one CPU too: a store
						// that reads, runs fn and writes back with
						// no lock or swap loses updates then.
						runtime.Gosched()
						apply(t, ks, func(s *control.State) uint64 {
							s.Release(time.Now(), &control.Config{}, &control.Lease{}, &control.Outcome{})
							return s.Generation()
						})
					})
					cancel()
					if err != nil {
						t.Errorf("Update(%q): %v", k, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	want := map[string]uint64{keys[0]: goroutines * each}
	for g := range goroutines {
		want[keys[1+g%3]] += each
	}
	for _, k := range keys {
		var gen uint64
		update(t, st, k, func(ks *polite.KeyState) { gen = ks.Generation() })
		if gen != want[k] {
			t.Errorf("key %q: Generation %d after %d updates, want %d: updates were lost", k, gen, want[k], want[k])
		}
	}
}

func testWakesWaiters(t *testing.T, st polite.Store, key string) {
	gen := bump(t, st, key, time.Now())
	const waiters = 3
	done := make(chan error, waiters)
	for range waiters {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 4*wakeWithin)
			defer cancel()
			done <- st.Wait(ctx, key, gen, time.Time{})
		}()
	}
	// Give the waiters time to wait: they must not return before the
	// change.
	select {
	case err := <-done:
		t.Fatalf("Wait returned %v before Generation grew", err)
	case <-time.After(100 * time.Millisecond):
	}
	bump(t, st, key, time.Now())
	deadline := time.After(wakeWithin)
	for range waiters {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Wait = %v after Generation grew, want nil", err)
			}
		case <-deadline:
			t.Fatalf("a waiter was not woken within %v of Generation growing", wakeWithin)
		}
	}
}

// A key with no state has Generation 0: the Update that makes its first
// state wakes those waiting for it to exceed 0. Before, MemoryStore left
// them waiting until their deadline.
func testWakesWaitersOfNewKey(t *testing.T, st polite.Store, key string) {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*wakeWithin)
		defer cancel()
		done <- st.Wait(ctx, key, 0, time.Now().Add(time.Hour))
	}()
	select {
	case err := <-done:
		t.Fatalf("Wait returned %v before the key had a state", err)
	case <-time.After(100 * time.Millisecond):
	}
	bump(t, st, key+"/other", time.Now()) // another key's: no wake
	select {
	case err := <-done:
		t.Fatalf("Wait returned %v when another key had its first state", err)
	case <-time.After(100 * time.Millisecond):
	}
	bump(t, st, key, time.Now())
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Wait = %v after the key's first state, want nil", err)
		}
	case <-time.After(wakeWithin):
		t.Fatalf("a waiter was not woken within %v of the key's first state", wakeWithin)
	}
}

func testWakeNotLost(t *testing.T, st polite.Store, key string) {
	gen := bump(t, st, key, time.Now())
	bump(t, st, key, time.Now()) // before the Wait: it must not be lost
	ctx, cancel := context.WithTimeout(context.Background(), wakeWithin)
	defer cancel()
	start := time.Now()
	if err := st.Wait(ctx, key, gen, time.Time{}); err != nil {
		t.Fatalf("Wait(gen %d) after Generation grew = %v, want nil at once", gen, err)
	}
	if d := time.Since(start); d > wakeWithin/2 {
		t.Errorf("Wait for a Generation already past took %v, want it at once", d)
	}
}

func testWaitUntil(t *testing.T, st polite.Store, key string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*wakeWithin)
	defer cancel()
	var gen uint64
	onTime(t, "Wait", func() time.Time {
		// An Update before each try, as a Budget waits after one.
		gen = bump(t, st, key, time.Now())
		until := time.Now().Add(150 * time.Millisecond)
		if err := st.Wait(ctx, key, gen, until); err != nil {
			t.Fatalf("Wait until %v = %v, want nil", until, err)
		}
		return until
	})
	start := time.Now()
	if err := st.Wait(ctx, key, gen, start.Add(-time.Second)); err != nil || time.Since(start) > wakeWithin/2 {
		t.Errorf("Wait with a deadline past = %v after %v, want nil at once", err, time.Since(start))
	}
	// A key never written: the deadline still holds.
	onTime(t, "Wait on a key never written", func() time.Time {
		until := time.Now().Add(50 * time.Millisecond)
		if err := st.Wait(ctx, key+"/never", 0, until); err != nil {
			t.Fatalf("Wait on a key never written until %v = %v, want nil", until, err)
		}
		return until
	})
}

// onTime runs wait, which waits until the instant it returns, and reports
// it returning early, or late in each of lateTries runs: a machine under
// load may wake a waiter seconds late once (a wait of 50ms returned 3.17s
// late in a loaded run of the suite), a store that is late every time.
// Each run is to wait as the first did, after the same calls.
func onTime(t *testing.T, what string, wait func() time.Time) {
	t.Helper()
	for try := 1; ; try++ {
		until := wait()
		now := time.Now()
		if now.Before(until.Add(-early)) {
			t.Errorf("%s returned %v before its deadline, with no change", what, until.Sub(now))
			return
		}
		if !now.After(until.Add(late)) {
			return
		}
		if try == lateTries {
			t.Errorf("%s returned %v after its deadline, want within %v (late in each of %d tries)", what, now.Sub(until), late, lateTries)
			return
		}
	}
}

// lateTries is how many times in a row a wait must return late to fail.
const lateTries = 3

func testWaitContext(t *testing.T, st polite.Store, key string) {
	gen := bump(t, st, key, time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := st.Wait(ctx, key, gen, time.Time{}); err != context.Canceled {
		t.Errorf("Wait with a context canceled = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := st.Wait(ctx, key, gen, time.Now().Add(time.Hour))
	if err != context.DeadlineExceeded {
		t.Errorf("Wait whose context ends first = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > wakeWithin {
		t.Errorf("Wait returned %v after its context ended", d)
	}
}

func testLeasesExpire(t *testing.T, st polite.Store, key string) {
	// At most one request in flight, leases of at most 16s (slots of
	// 1s): a request whose process died holds the slot until its lease
	// ends, then the next one goes.
	cfg := &control.Config{MaxConcurrency: 1, Lease: 16 * time.Second}
	t0 := time.Now()
	type result struct {
		ok bool
		h  control.Hold
	}
	acquire := func(at, until time.Time) (bool, control.Hold) {
		var r result
		update(t, st, key, func(ks *polite.KeyState) {
			r = apply(t, ks, func(s *control.State) result {
				h, ok := s.Acquire(at, cfg, control.Ask{Until: until}, new(control.Lease))
				return result{ok, h}
			})
		})
		return r.ok, r.h
	}
	if ok, _ := acquire(t0, t0.Add(2*time.Second)); !ok {
		t.Fatal("the first request to a key was held")
	}
	ok, h := acquire(t0.Add(time.Second), time.Time{})
	if ok || h.Reason != control.ReasonProbe || h.Wake().IsZero() || h.Wake().After(t0.Add(4*time.Second)) {
		t.Fatalf("second request while the first is out: granted %v, hold %+v; want held for the probe, to look again by its lease's end", ok, h)
	}
	if ok, _ := acquire(h.Wake(), time.Time{}); !ok {
		t.Errorf("a request after the lease of a request that never ended (at %v): held, want granted", h.Wake().Sub(t0))
	}
}

func testTables(t *testing.T, st polite.Store, key string) {
	t0 := time.Now()
	for _, tab := range controltest.Tables() {
		t.Run(tab.Name, func(t *testing.T) {
			k := key + "/" + tab.Name
			var bare control.State
			want := controltest.Replay(tab, t0, func(step func(*control.State) controltest.Result) controltest.Result {
				return step(&bare)
			})
			got := controltest.Replay(tab, t0, func(step func(*control.State) controltest.Result) controltest.Result {
				var r controltest.Result
				update(t, st, k, func(ks *polite.KeyState) { r = apply(t, ks, step) })
				return r
			})
			for _, e := range controltest.Check(tab, t0, got) {
				t.Error(e)
			}
			if d := controltest.Diff(tab, want, got); d != "" {
				t.Errorf("through the store, results differ from the bare controller's: %s", d)
			}
		})
	}
}
