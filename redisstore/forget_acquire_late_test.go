package redisstore

import (
	"sync"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// A batch of a Forget and an Acquire, of a key whose last incarnation
// granted one lease and holds none: the Forget starts a new incarnation
// (its grants counted from zero), and the Acquire takes a lease (one
// grant). The batch ends at the count of grants it began with; told by
// that count alone, its swap went without a limit, and Redis, busy past
// the Store's Timeout, ran it late: the lease was kept in Redis while both
// Updates failed and the Budget went to its fallback, and every process
// was held for the key's probe for a Lease. Now it goes with a limit, as
// the Acquire alone does, and changes nothing when run late.
func TestForgetAcquireBatchLateKeepsNothing(t *testing.T) {
	waitsSeconds(t)
	for _, withForget := range []bool{false, true} {
		name := "acquire alone"
		if withForget {
			name = "forget then acquire, one batch"
		}
		t.Run(name, func(t *testing.T) {
			addr := redisAddr(t)
			prefix := testPrefix(t)
			a := newStore(t, ownClient(t, addr), prefix) // Timeout 250ms
			b := newStore(t, ownClient(t, addr), prefix)
			const k = "k"
			probed(t, a, k) // Grants 1, no lease; the swaps measured the server's clock

			var once sync.Once
			var busy <-chan error
			becomeBusy := func() { once.Do(func() { busy = busyRedis(t, addr, time.Second) }) }

			open, waitQueued := plug(t, a, k)

			var wg sync.WaitGroup
			var ferr, aerr error
			q := 0
			if withForget {
				wg.Go(func() {
					ferr = a.Update(t.Context(), k, func(ks *polite.KeyState) {
						splitEdit(t, ks, func(s *control.State) { s.Forget(time.Now(), lateCfg) })
					})
				})
				q++
				waitQueued(q)
			}
			var l control.Lease
			granted := false
			wg.Go(func() {
				aerr = a.Update(t.Context(), k, func(ks *polite.KeyState) {
					splitEdit(t, ks, func(s *control.State) { _, granted = s.Acquire(time.Now(), lateCfg, control.Ask{}, &l) })
					becomeBusy() // Redis turns busy (a slow command elsewhere) as this batch is sent
				})
			})
			q++
			waitQueued(q)
			if err := open(); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if e := <-busy; e != nil {
				t.Fatal(e)
			}
			time.Sleep(50 * time.Millisecond) // Redis has run the swap by now
			t.Logf("forget: %v; acquire: granted %v, err %v", ferr, granted, aerr)
			if aerr == nil || withForget && ferr == nil {
				t.Fatal("an Update of the batch succeeded while Redis was busy for a second")
			}
			raw, err := b.rdb.HGet(t.Context(), b.redisKey(id(k)), "s").Bytes()
			if err != nil {
				t.Fatal(err)
			}
			var c control.State
			if err := c.UnmarshalBinary(raw); err != nil {
				t.Fatal(err)
			}
			t.Logf("Redis holds: Grants %d, Leases %d, live leases now %v", c.Grants(), c.Leases(), c.InUse(time.Now().UnixNano()))
			if h := free(t, b, k); h != "" {
				t.Errorf("the acquire's Update failed (%v), yet Redis kept its lease: the next request in another process is %s", aerr, h)
			}
		})
	}
}
