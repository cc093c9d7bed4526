package polite

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// A request held by a key's pause, whose key is forgotten before it comes
// to wait, and whose key's next state has reached the generation of its
// hold again (each state's Generation counts from its own start): told by
// the generation alone, the request slept on the new state, which is not
// paused, until the old pause's end or the new state's next change (a
// minute here, the context's). Told by the state's identity too, it looks
// again at once, as a request whose key has no state does (DESIGN.md §3).
func TestWaitNewIncarnationSameGeneration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		b.init()
		k := originKey("http", "api.test")
		now := time.Now()
		var g lease
		if _, ok := b.mem.acquire(nil, k.m, now, &b.cfg, control.Ask{}, &g); !ok {
			t.Fatal("the first request was held")
		}
		b.mem.release(k.m, now, &b.cfg, &g, &control.Outcome{Served: true})
		b.mem.pause(k.m, now, now.Add(time.Hour), control.ReasonRetryAfter, &b.cfg, false)
		var g2 lease
		h, ok := b.mem.acquire(nil, k.m, now, &b.cfg, control.Ask{}, &g2)
		if ok {
			t.Fatal("granted in the pause")
		}
		b.Forget("http://api.test") // before the held request waits
		for range 100 {             // the next state serves until its Generation is the hold's
			sh := b.mem.shard(k.m)
			sh.mu.Lock()
			e := sh.m[k.m]
			var gen uint64
			if e != nil {
				gen = e.ks.Generation()
			}
			sh.mu.Unlock()
			if e != nil && gen == h.Gen {
				break
			}
			if e != nil && gen > h.Gen {
				t.Fatalf("the new state's generation went past %d", h.Gen)
			}
			var g3 lease
			if _, ok := b.mem.acquire(nil, k.m, now, &b.cfg, control.Ask{}, &g3); !ok {
				t.Fatal("the forgotten key's next request was held")
			}
			b.mem.release(k.m, now, &b.cfg, &g3, &control.Outcome{Served: true})
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start := time.Now()
		if err := b.mem.wait(ctx, k.m, h.Gen, h.Born(), h.Until(), nil, true); err != nil || time.Since(start) > 0 {
			t.Errorf("held by the pause of a key forgotten since (generation %d): waited %v (%v), want to look again at once", h.Gen, time.Since(start), err)
		}
	})
}
