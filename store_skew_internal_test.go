package polite

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// sharedStore is a Store shared by two processes (a MemoryStore behind the
// Store interface, so that the Budget treats it as an external Store, as it
// would redisstore).
type sharedStore struct{ m *MemoryStore }

func (s sharedStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	return s.m.Update(ctx, key, fn)
}

func (s sharedStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.m.Wait(ctx, key, gen, until)
}

// Budget.MaxRate bounds every process sharing a Store, within skewMax of
// clock difference. Two processes share a Store; B's wall clock is 1.5 s
// ahead of A's (no NTP step, just two hosts). A runs a real Budget and
// Transport; B is emulated as Budget.acquireExt / releaseExt and
// Transport.hold drive the controller over a Store (Bound, then Acquire
// with Turns/Since/Claimed; Release; Store.Wait on the hold's generation),
// reading its own clock. With Budget.MaxRate 1 over 10 s, at most 11
// starts reach the origin. A's Bound cut B's next start to A's now + 1 s,
// already past for B, which went again at once: 8,992 starts in 10 s.
func TestSharedStoreMaxRateClockAhead(t *testing.T) {
	// B's clock 1.5 s ahead of A's: B starts a request every millisecond
	// (as fast as its requests end), A is starved.
	sharedStoreSkew(t, 1500*time.Millisecond)
}

// The same with B's clock 1.5 s behind A's: the two processes do not wake
// each other without end. Each cut the other's next start, as from a
// clock gone back, raising the generation, which ended the other's
// Store.Wait at once: a loop that never slept, on the Store (Redis) in
// real time, for as long as the holds lasted.
func TestSharedStoreClockBehindNoLoop(t *testing.T) {
	sharedStoreSkew(t, -1500*time.Millisecond)
}

func sharedStoreSkew(t *testing.T, skew time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		shared := sharedStore{&MemoryStore{}}
		cfg := control.Config{MaxRate: 1}

		var (
			mu     sync.Mutex
			starts []time.Time // real (bubble) instants the origin saw a start
		)
		record := func() {
			mu.Lock()
			starts = append(starts, time.Now())
			mu.Unlock()
		}

		bA := &Budget{Store: shared, MaxRate: 1}
		trA := &Transport{Base: roundTripper(func(r *http.Request) (*http.Response, error) {
			record()
			return okResponse(r)
		}), Budget: bA}
		key := originKey("http", "api.test").m.String()

		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		wg.Go(func() { // process A
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
				resp, err := trA.RoundTrip(req)
				if err != nil {
					return
				}
				resp.Body.Close()
			}
		})
		nB := 0
		spun := false
		t0 := time.Now()
		wg.Go(func() { // process B, its clock skew ahead
			time.Sleep(10 * time.Millisecond)
			ask := control.Ask{Turns: true}
			var lastTry time.Time
			spins := 0
			for ctx.Err() == nil {
				now := time.Now().Add(skew)
				var (
					l  control.Lease
					h  control.Hold
					ok bool
				)
				shared.Update(ctx, key, func(s *KeyState) {
					s.c.Bound(now, &cfg)
					ask := ask
					ask.Shared = true // as Budget.acquireExt asks
					h, ok = s.c.Acquire(now, &cfg, ask, &l)
				})
				if ok {
					nB++
					record()
					time.Sleep(time.Millisecond) // the request's latency
					done := time.Now().Add(skew)
					shared.Update(context.Background(), key, func(s *KeyState) {
						s.c.Release(done, &cfg, &l, &control.Outcome{First: true, Bytes: -1, Served: true})
					})
					ask = control.Ask{Turns: true} // the next request
					continue
				}
				// Held: as Transport.hold asks again (its place in line,
				// its claim) and waits on the Store as a Budget does
				// (Store.Wait with the hold's generation, until its end),
				// B's instant converted to the shared (real) clock for
				// the timer.
				if ask.Since.IsZero() {
					ask.Since = now
				}
				// Count B's tries at one instant: a Budget waiting on a
				// Store asks it again only when the state changed or its
				// hold ended.
				if rn := time.Now(); rn.Equal(lastTry) {
					if spins++; spins == 100000 {
						spun = true
						t.Errorf("process B asked the Store %d times at one instant (%v into the test), each hold woken by the other process's Update: a hot loop between two processes sharing a Store whose clocks differ by %v (last hold: %v until %v, gen %d)", spins, rn.Sub(t0), skew, h.Reason, h.Until(), h.Gen)
						cancel()
					}
				} else {
					lastTry, spins = rn, 0
				}
				ask.Claimed = h.Claimed()
				until := h.Until()
				if until.IsZero() {
					until = h.Wake()
				}
				if until.IsZero() {
					until = now.Add(time.Minute)
				}
				shared.Wait(ctx, key, h.Gen, until.Add(-skew))
			}
		})
		wg.Wait()

		sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
		worst, j := 0, 0
		for i := range starts {
			for j < len(starts) && starts[j].Sub(starts[i]) < time.Second {
				j++
			}
			worst = max(worst, j-i)
		}
		// Each process reads the next start the other wrote by its own
		// clock: a start of one may follow the other's by a spacing less
		// their difference, never more than two in a second.
		if !spun && (len(starts) > 11 || worst > 2) {
			t.Errorf("Budget.MaxRate 1 over a shared Store, two processes whose clocks differ by %v: %d starts in 10s (%d by B; want at most 11), up to %d within one second (want 2 at most)", skew, len(starts), nB, worst)
		}
	})
}
