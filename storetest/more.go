package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// testKeepsLargeState checks that a state of several KiB round-trips: one
// of eight policies with long names and partitions and a hundred starts.
// A store that kept only small states (a size limit of its own, a field
// cut short) would keep the old state in silence.
func testKeepsLargeState(t *testing.T, st polite.Store, key string) {
	now := time.Now()
	cfg := &control.Config{}
	var qs []parse.Quota
	for i := range 8 {
		qs = append(qs, parse.Quota{Policy: fmt.Sprintf("%d%s", i, strings.Repeat("p", 120)), Partition: []byte(strings.Repeat("k", 100)),
			Unit: "requests", Limit: 128, Window: time.Hour, Remaining: 127, Reset: time.Hour, Dialect: "ietf"})
	}
	var want []byte
	update(t, st, key, func(ks *polite.KeyState) {
		apply(t, ks, func(s *control.State) bool {
			for i := range 100 {
				at := now.Add(time.Duration(i) * time.Millisecond)
				var l control.Lease
				if _, ok := s.Acquire(at, cfg, control.Ask{Custom: true}, &l); ok {
					s.Release(at.Add(time.Microsecond), cfg, &l, &control.Outcome{Quotas: qs})
				}
			}
			return true
		})
		want, _ = ks.MarshalBinary()
	})
	if len(want) < 4<<10 {
		t.Fatalf("the large state encodes in %d bytes, want at least 4 KiB", len(want))
	}
	if got := read(t, st, key); string(got) != string(want) {
		t.Errorf("a state of %d bytes read back as %d bytes, not as written", len(want), len(got))
	}
}

// testWaitNoGrowth checks that Updates that leave Generation as it was (a
// read, a state written back unchanged) wake no waiter: Wait returns when
// Generation grows, not when a key is written.
func testWaitNoGrowth(t *testing.T, st polite.Store, key string) {
	gen := bump(t, st, key, time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 4*wakeWithin)
	defer cancel()
	until := time.Now().Add(300 * time.Millisecond)
	done := make(chan time.Time, 1)
	go func() {
		st.Wait(ctx, key, gen, until)
		done <- time.Now()
	}()
	time.Sleep(50 * time.Millisecond)
	update(t, st, key, func(ks *polite.KeyState) { _ = ks.Generation() })
	update(t, st, key, func(ks *polite.KeyState) {
		b, _ := ks.MarshalBinary()
		if err := ks.UnmarshalBinary(b); err != nil {
			t.Errorf("the state does not read back: %v", err)
		}
	})
	if at := <-done; at.Before(until.Add(-early)) {
		t.Errorf("Wait returned %v before its deadline, after Updates that left Generation %d as it was", until.Sub(at), gen)
	}
}

// testUpdateEndedContext checks Update with a context already ended: it
// returns an error, or keeps what its function left (nil means kept).
func testUpdateEndedContext(t *testing.T, st polite.Store, key string) {
	gen := bump(t, st, key, time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := st.Update(ctx, key, func(ks *polite.KeyState) {
		apply(t, ks, func(s *control.State) bool {
			s.Release(time.Now(), &control.Config{}, &control.Lease{}, &control.Outcome{})
			return true
		})
	})
	if err != nil {
		return
	}
	var got uint64
	update(t, st, key, func(ks *polite.KeyState) { got = ks.Generation() })
	if got <= gen {
		t.Errorf("Update with its context ended returned nil, and its state was not kept: Generation %d, want more than %d", got, gen)
	}
}

// TestSharedStore runs the checks of a store shared by several processes
// on pairs of Stores newPair returns, one pair per subtest: two handles on
// one shared backing store, as two processes would open it (two clients
// of one Redis, under one prefix). [TestStore] runs every check through
// one handle, and cannot tell a store shared in name only. newPair may
// register cleanups with t. Keys are unique to each run, as TestStore's.
//
// It checks that:
//   - Updates through both handles at once, on one key, lose no update:
//     Update is atomic across processes, not only within one;
//   - an Update through one handle is what the other's next Update reads;
//   - an Update through one handle that makes Generation grow wakes the
//     waiters of the other;
//   - a Wait through one handle for a change past the Generation its own
//     Update returned returns at once when the other handle made it grow
//     meanwhile: the wake is not lost between the Update and the Wait,
//     nor as the Wait starts.
func TestSharedStore(t *testing.T, newPair func(t *testing.T) (polite.Store, polite.Store)) {
	run := fmt.Sprintf("storetest/shared/%d/", time.Now().UnixNano())
	tests := []struct {
		name string
		f    func(t *testing.T, a, b polite.Store, key string)
	}{
		{"UpdatesAcross", testUpdatesAcross},
		{"ReadsAcross", testReadsAcross},
		{"WakesAcross", testWakesAcross},
		{"WakeNotLostAcross", testWakeNotLostAcross},
		{"WakeAsWaitStartsAcross", testWakeAsWaitStartsAcross},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := newPair(t)
			tt.f(t, a, b, run+t.Name())
		})
	}
}

func testUpdatesAcross(t *testing.T, a, b polite.Store, key string) {
	const goroutines, each = 4, 10
	var wg sync.WaitGroup
	for _, st := range []polite.Store{a, b} {
		for range goroutines {
			wg.Go(func() {
				for range each {
					update(t, st, key, func(ks *polite.KeyState) {
						// Long enough for an Update through the other
						// handle to read the state meanwhile, were
						// Update atomic within a process only.
						time.Sleep(time.Millisecond)
						apply(t, ks, func(s *control.State) bool {
							s.Release(time.Now(), &control.Config{}, &control.Lease{}, &control.Outcome{})
							return true
						})
					})
				}
			})
		}
	}
	wg.Wait()
	var got uint64
	update(t, a, key, func(ks *polite.KeyState) { got = ks.Generation() })
	if want := uint64(2 * goroutines * each); got != want {
		t.Errorf("after %d Updates through two handles at once, Generation %d: %d lost", 2*goroutines*each, got, want-got)
	}
}

func testReadsAcross(t *testing.T, a, b polite.Store, key string) {
	gen := bump(t, a, key, time.Now())
	var got uint64
	update(t, b, key, func(ks *polite.KeyState) { got = ks.Generation() })
	if got != gen {
		t.Errorf("through the other handle, Generation %d, want %d as written", got, gen)
	}
	gen = bump(t, b, key, time.Now())
	update(t, a, key, func(ks *polite.KeyState) { got = ks.Generation() })
	if got != gen {
		t.Errorf("back through the first handle, Generation %d, want %d as written", got, gen)
	}
}

func testWakesAcross(t *testing.T, a, b polite.Store, key string) {
	gen := bump(t, a, key, time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 4*wakeWithin)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- a.Wait(ctx, key, gen, start.Add(wakeWithin+time.Second)) }()
	time.Sleep(50 * time.Millisecond)
	bump(t, b, key, time.Now())
	if err := <-done; err != nil || time.Since(start) > wakeWithin {
		t.Errorf("Wait through one handle = %v after %v, want nil within %v of an Update through the other", err, time.Since(start), wakeWithin)
	}
}

func testWakeNotLostAcross(t *testing.T, a, b polite.Store, key string) {
	gen := bump(t, a, key, time.Now())
	bump(t, b, key, time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 4*wakeWithin)
	defer cancel()
	start := time.Now()
	if err := a.Wait(ctx, key, gen, start.Add(wakeWithin+time.Second)); err != nil || time.Since(start) > wakeWithin {
		t.Errorf("Wait through one handle past the Generation its Update returned, grown since through the other = %v after %v, want nil at once", err, time.Since(start))
	}
}

// wakeAsWaitStarts checks that an Update through updater that makes
// Generation grow as a Wait through waiter starts, between its reading the
// Generation and its subscribing to wakes, wakes it: a store that does the
// two in separate steps (a read, then a subscription, each a round trip)
// loses such a wake, and its waiter waits for its deadline. The Updates
// come 0 to 3 ms after each Wait is called, to cover the steps of a store
// in another process.
func wakeAsWaitStarts(t *testing.T, waiter, updater polite.Store, key string) {
	const rounds = 40
	for i := range rounds {
		gen := bump(t, updater, key, time.Now())
		ctx, cancel := context.WithTimeout(context.Background(), 4*wakeWithin)
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- waiter.Wait(ctx, key, gen, start.Add(wakeWithin)) }()
		time.Sleep(time.Duration(i%16) * 200 * time.Microsecond)
		bump(t, updater, key, time.Now())
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Wait = %v after Generation grew as it started, want nil", err)
			}
		case <-time.After(wakeWithin / 2):
			t.Errorf("Wait not woken within %v by an Update %v after it was called: the wake was lost", wakeWithin/2, time.Duration(i%16)*200*time.Microsecond)
		}
		cancel()
		if t.Failed() {
			return
		}
	}
}

func testWakeAsWaitStarts(t *testing.T, st polite.Store, key string) {
	wakeAsWaitStarts(t, st, st, key)
}

func testWakeAsWaitStartsAcross(t *testing.T, a, b polite.Store, key string) {
	wakeAsWaitStarts(t, a, b, key)
}
