package redisstore

import (
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// A key lost in Redis while a request waited on it (FLUSHALL, a restart
// with no data, an eviction under maxmemory: a volatile-* policy picks
// exactly such keys, which all have a TTL) started over. The request in
// flight that held the waiter ended, and its release made a fresh state
// whose generation, counting from zero again, was the one the waiter
// waited on: the notification named "the generation already known" and
// was dropped, and the waiter slept to its hold's end (the lease's end,
// up to Lease + Lease/16, 10m37s by default), though the key had nothing
// in flight. The package doc promised a wake when "the key expired and
// started over"; MemoryStore wakes the waiters of a key it forgets. A
// Wait called only after the notification came, its generation from the
// state before, slept as long; and so did one called after an update of
// this process (an Inspect's, another request's) had swapped the key
// started over, which took the generations waited on for its own.
func TestRestartSameGenerationWakes(t *testing.T) {
	for _, c := range []struct {
		name                string
		waitAfter, updateOn bool
	}{
		{"waiting", false, false},
		{"wait called after the notification", true, false},
		{"wait called after the notification and an update", true, true},
	} {
		waitAfter := c.waitAfter
		t.Run(c.name, func(t *testing.T) {
			rdb, a, b := twoStores(t)
			ctx := t.Context()
			k := "https://api.example"
			probed(t, a, k) // generation 1
			var l control.Lease
			if ok, err := acquire(t, a, k, &l); err != nil || !ok {
				t.Fatalf("the request in flight: granted %v, %v", ok, err)
			}
			// b's request is held by a's: MaxConcurrency 1.
			var h control.Hold
			granted := false
			if err := b.Update(ctx, k, func(ks *polite.KeyState) {
				edit(t, ks, func(s *control.State) { h, granted = s.Acquire(time.Now(), lateCfg, control.Ask{}, new(control.Lease)) })
			}); err != nil || granted {
				t.Fatalf("b's request: granted %v, %v; want held", granted, err)
			}
			// The key is lost (evicted, flushed).
			if err := rdb.Del(ctx, a.redisKey(id(k))).Err(); err != nil {
				t.Fatal(err)
			}
			var woke <-chan time.Duration
			if !waitAfter {
				woke = waitAtMost(b, k, h.Gen, 2*time.Second)
				time.Sleep(50 * time.Millisecond)
			}
			if err := release(t, a, k, &l); err != nil { // on the fresh state: generation 1 again
				t.Fatal(err)
			}
			released := time.Now()
			if waitAfter {
				time.Sleep(50 * time.Millisecond) // b receives the notification
				if c.updateOn {
					// An update of b that changes nothing (Inspect's).
					if err := b.Update(ctx, k, func(*polite.KeyState) {}); err != nil {
						t.Fatal(err)
					}
				}
				woke = waitAtMost(b, k, h.Gen, 2*time.Second)
			}
			var g uint64
			var inFlight int64
			a.Update(ctx, k, func(ks *polite.KeyState) {
				edit(t, ks, func(s *control.State) { g, inFlight = s.Generation(), s.Leases() })
			})
			if d := <-woke; d > 500*time.Millisecond {
				t.Errorf("Wait(gen %d) returned %v after the key started over and the request holding it ended (key now gen %d, %d leases): want a wake at once",
					h.Gen, (time.Since(released)).Round(time.Millisecond), g, inFlight)
			}
		})
	}
}
