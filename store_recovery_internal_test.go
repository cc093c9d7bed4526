package polite

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// downStore is a Store other than a MemoryStore (so that the Budget has a
// fallback), counting its Updates, which can be made to fail.
type downStore struct {
	m       MemoryStore
	failing atomic.Bool
	updates atomic.Int64
}

var errFlakyDown = errors.New("store down")

func (s *downStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	if s.failing.Load() {
		return errFlakyDown
	}
	s.updates.Add(1)
	return s.m.Update(ctx, key, fn)
}

func (s *downStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	if s.failing.Load() {
		return errFlakyDown
	}
	return s.m.Wait(ctx, key, gen, until)
}

// startLog is a Base that answers 200 at once and records when each
// request started.
type startLog struct {
	mu sync.Mutex
	at []time.Time
}

func (f *startLog) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.at = append(f.at, time.Now())
	f.mu.Unlock()
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// tenMinutes sends a GET of url through tr once a minute for ten
// minutes, and returns how many of them reached f (tr's Base, or under
// it).
func (f *startLog) tenMinutes(t *testing.T, tr *Transport, url string) int {
	f.mu.Lock()
	before := len(f.at)
	f.mu.Unlock()
	for range 10 {
		time.Sleep(time.Minute)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.at) - before
}

func (f *startLog) closest() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	least := time.Duration(1 << 62)
	for i := 1; i < len(f.at); i++ {
		least = min(least, f.at[i].Sub(f.at[i-1]))
	}
	return least
}

// storeRT adapts a function to http.RoundTripper.
type storeRT func(*http.Request) (*http.Response, error)

func (f storeRT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func storeGet(t *testing.T, tr http.RoundTripper) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	resp.Body.Close()
}

// Budget.MaxRate "is the most requests per second started under one key
// by all the Budget's Transports together ... whatever the server says".
// The spacing it kept lived in the Store's state only: when the Store
// failed, the fallback started the key afresh, and a second request went
// at once after one the Store granted a moment before, from the same
// process, the same Transport. (A pause survived the switch; MaxRate's
// next start did not.)
func TestBudgetMaxRateAcrossStoreFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		base := &startLog{}
		tr := &Transport{Base: base, Budget: &Budget{Store: st, MaxRate: 1}}
		storeGet(t, tr) // granted by the Store: its next start is a second later
		time.Sleep(100 * time.Millisecond)
		st.failing.Store(true)
		storeGet(t, tr) // the Store fails: the fallback
		if d := base.closest(); d < time.Second {
			t.Errorf("Budget.MaxRate 1: two starts %v apart across the Store's failure, want 1s at least", d)
		}
	})
}

// The other way: the fallback's spacing was not carried into the Store
// when it answered again (as a pause learned meanwhile was).
func TestBudgetMaxRateAcrossStoreRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		base := &startLog{}
		tr := &Transport{Base: base, Budget: &Budget{Store: st, MaxRate: 0.2}} // one start per 5 s
		storeGet(t, tr)                                                        // through the Store
		time.Sleep(10 * time.Second)
		st.failing.Store(true)
		storeGet(t, tr) // the fallback; the Store is tried again a second later
		st.failing.Store(false)
		time.Sleep(1100 * time.Millisecond)
		storeGet(t, tr) // the Store again
		if d := base.closest(); d < 5*time.Second {
			t.Errorf("Budget.MaxRate 0.2: two starts %v apart across the Store's recovery, want 5s at least", d)
		}
	})
}

// A request the fallback granted while the Store failed, answered once
// the Store answered again: its refusal's pause was kept in this
// process's fallback only, though the Store was there to share it. With a
// Retry-After longer than MaxWait the refusal went back to the caller with
// no retry (whose first ask would have carried the pause over), and every
// other process sharing the Store went on sending to the origin for the
// hour the server asked all of them to leave it alone.
func TestFallbackRefusalAfterRecoveryShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		answer := make(chan struct{})
		refusing := storeRT(func(r *http.Request) (*http.Response, error) {
			<-answer
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
		})
		other := &startLog{}
		a := &Transport{Base: refusing, Budget: &Budget{Store: st}} // one process
		b := &Transport{Base: other, Budget: &Budget{Store: st}}    // another, sharing the Store
		storeGet(t, b)
		st.failing.Store(true)
		done := make(chan struct{})
		go func() {
			defer close(done)
			storeGet(t, a) // granted by a's fallback; in flight
		}()
		synctest.Wait()
		st.failing.Store(false) // the Store answers again
		time.Sleep(2 * time.Second)
		close(answer) // a's request is refused: Retry-After: 3600
		<-done
		var ks KeyState
		st.Update(t.Context(), "http://api.test", func(s *KeyState) { ks = *s })
		stored, _ := ks.c.Paused(time.Now())
		time.Sleep(time.Second)
		before := len(other.at)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		if resp, err := b.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
		if len(other.at) > before {
			t.Errorf("another process sent to the origin 1s into the Retry-After: 3600 a refusal taught once the Store answered again (the Store's pause: %v)", stored)
		}
	})
}

// As above, but the refusal came within the second after one failed
// Update (a blip: one call's timeout, ErrContention on another key),
// before the Store was to be tried again: the release did not carry the
// pause, nothing did after, and another process sent to the origin 10
// times in the hour the server asked all of them to leave it alone.
func TestFallbackRefusalWithinRetrySecondShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		refusing := storeRT(func(r *http.Request) (*http.Response, error) {
			st.failing.Store(false) // the blip is over
			time.Sleep(100 * time.Millisecond)
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
		})
		other := &startLog{}
		a := &Transport{Base: refusing, Budget: &Budget{Store: st}} // one process
		b := &Transport{Base: other, Budget: &Budget{Store: st}}    // another, sharing the Store
		storeGet(t, b)
		st.failing.Store(true)
		storeGet(t, a) // granted by a's fallback, refused 100 ms later, handed back
		if n := other.tenMinutes(t, b, "http://api.test/"); n > 0 {
			t.Errorf("another process sent to the origin %d times of 10 in the first ten minutes of a Retry-After: 3600 this one was told", n)
		}
	})
}

// "the Budget tries Store again a second later": a second by the wall
// clock, recorded as an instant (Budget.down) and compared with the
// Transport's clock reading of each request. When the wall clock stepped
// back after a failure (an NTP correction of two days, as the tests of
// the ceilings take), the Store was not asked again for the whole step:
// every request for two days paced on this process's fallback alone, and
// no EventStoreUp came, though the Store answered again a second later.
func TestStoreRetriedAfterClockStepBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		b := &Budget{Store: st}
		b.init()
		k := originKey("http", "api.test")
		t0 := time.Now()
		st.failing.Store(true)
		var g lease
		if _, ok, note, _ := b.acquire(t.Context(), k, t0, control.Ask{}, &g); !ok || note.kind != EventStoreDown {
			t.Fatalf("first request with the Store failing: granted %v, note %q; want granted by the fallback, EventStoreDown", ok, note.kind)
		}
		b.release(t.Context(), k, &g, t0, &control.Outcome{First: true})
		st.failing.Store(false)

		time.Sleep(5 * time.Second) // the Store answers again
		back := t0.Add(-48*time.Hour + 5*time.Second)
		n := st.updates.Load()
		g = lease{}
		_, _, note, _ := b.acquire(t.Context(), k, back, control.Ask{}, &g)
		if st.updates.Load() == n {
			t.Errorf("5s after the Store failed, the wall clock stepped back 48h: the Store was not asked again (note %q); the Budget waits for %v of its clock", note.kind, time.Unix(0, b.retryAt()).Sub(back))
		}
	})
}

// Budget.MaxRate's next start, copied from the Store into the fallback at
// a grant (MemoryStore.space), landed first on an entry no Acquire used
// (its State.used 0): the fallback's clock-back bound (acquireAt) never
// ran on it, as it did not for a copied pause before PauseUntil set used
// (TestCopiedPauseAfterClockStepBack). After a wall-clock step back of
// 48 h with the Store failing, the fallback held the key 48 h.
func TestCopiedSpacingAfterClockStepBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		b := &Budget{Store: st, MaxRate: 1}
		b.init()
		k := originKey("http", "api.test")
		t0 := time.Now()
		grantRelease(t, b, k, t0, false)
		var g lease
		st.failing.Store(true)
		back := t0.Add(-48 * time.Hour)
		g = lease{}
		h, ok, _, _ := b.acquire(t.Context(), k, back, control.Ask{}, &g)
		if !ok && h.Until().Sub(back) > time.Second {
			t.Errorf("MaxRate 1, Store failing, clock stepped back 48h: the fallback holds the key %v (until %v), want at most one spacing (1s)", h.Until().Sub(back), h.Until())
		}
	})
}

// Budget.Forget in another process sharing the Store, one with no MaxRate
// of its own, clears the key's state there, MaxRate's next start with it
// (a Budget with a MaxRate keeps it: TestForgetKeepsBudgetMaxRate); but
// the copy this process's fallback took at its last grant was first
// written back into the Store at its next request (unlike a pause's, the
// copy was not told from what the fallback set itself), and the forgotten
// spacing held the key again.
func TestForgetElsewhereClearsSpacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		a := &Budget{Store: st, MaxRate: 0.01} // one start per 100 s
		o := &Budget{Store: st}                // another process
		a.init()
		k := originKey("http", "api.test")
		t0 := time.Now()
		var g lease
		if _, ok, _, _ := a.acquire(t.Context(), k, t0, control.Ask{}, &g); !ok {
			t.Fatal("first request held")
		}
		a.release(t.Context(), k, &g, t0, &control.Outcome{First: true})
		time.Sleep(time.Second)
		o.Forget("http://api.test") // clears the Store's state
		now := time.Now()
		g = lease{}
		h, ok, _, _ := a.acquire(t.Context(), k, now, control.Ask{}, &g)
		if !ok {
			t.Errorf("after Budget.Forget (another process, shared Store) the key's next request is held until %v (%v, %v), want it to start fresh", h.Until(), h.Until().Sub(now), h.Reason)
		}
	})
}

// With the Store answering, every grant under MaxRate first made a
// fallback entry for its spacing: with the fallback full (MaxKeys) of
// pauses copied from the Store, a request on another key evicted one, and
// when the Store failed, the key it paused was free in this process.
func TestSpacingKeepsCopiedPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		b := &Budget{Store: st, MaxRate: 1, MaxKeys: 1}
		b.init()
		p := originKey("http", "paused.test")
		x := originKey("http", "other.test")
		t0 := time.Now()
		if err := st.Update(t.Context(), p.m.String(), func(s *KeyState) {
			s.c.PauseUntil(t0, &b.cfg, t0.Add(time.Hour), control.ReasonRetryAfter)
		}); err != nil {
			t.Fatal(err)
		}
		var g lease
		if _, ok, _, _ := b.acquire(t.Context(), p, t0, control.Ask{}, &g); ok {
			t.Fatal("granted inside the Store's pause")
		} // the Store's pause is copied into the fallback
		g = lease{}
		if _, ok, _, _ := b.acquire(t.Context(), x, t0, control.Ask{}, &g); !ok {
			t.Fatal("other key held")
		}
		b.release(t.Context(), x, &g, t0, &control.Outcome{First: true})
		st.failing.Store(true)
		now := t0.Add(time.Minute)
		g = lease{}
		if _, ok, _, _ := b.acquire(t.Context(), p, now, control.Ask{}, &g); ok {
			t.Errorf("Store failing 1 min into a 1 h pause it told this process: the fallback granted the paused key (its copy evicted by another key's MaxRate spacing)")
		}
	})
}

// The fallback "full" (count >= MaxKeys) only of an entry that is
// forgettable (its MaxRate spacing copied from the Store has passed, and
// nothing else holds it): MemoryStore.space checked the count before any
// pruning, so it copied no spacing for a new key, though entry(create)
// would have dropped the expired entry first. While the Store answers,
// nothing else prunes the fallback: once MaxKeys keys were seen, no new
// key's spacing was copied, and when the Store failed the fallback
// granted a request right after the Store's grant.
func TestSpacingCopiedWhenFallbackFullOfExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		b := &Budget{Store: st, MaxRate: 0.01, MaxKeys: 1} // one start per 100 s
		b.init()
		a := originKey("http", "a.test")
		x := originKey("http", "x.test")
		var g lease
		t0 := time.Now()
		if _, ok, _, _ := b.acquire(t.Context(), a, t0, control.Ask{}, &g); !ok || g.local {
			t.Fatalf("a: granted %v, local %v; want granted by the Store", ok, g.local)
		}
		b.release(t.Context(), a, &g, t0, &control.Outcome{First: true})

		time.Sleep(200 * time.Second) // a's spacing (and its fallback copy) is over
		t1 := time.Now()
		g = lease{}
		if _, ok, _, _ := b.acquire(t.Context(), x, t1, control.Ask{}, &g); !ok || g.local {
			t.Fatalf("x: granted %v, local %v; want granted by the Store", ok, g.local)
		}
		b.release(t.Context(), x, &g, t1, &control.Outcome{First: true})

		st.failing.Store(true)
		time.Sleep(time.Second)
		now := time.Now()
		g = lease{}
		if _, ok, _, _ := b.acquire(t.Context(), x, now, control.Ask{}, &g); ok {
			t.Errorf("MaxRate 0.01, Store failing 1s after it granted x: the fallback granted x again (local %v); want it held until %v (the Store's spacing, not copied: the fallback counted a's expired entry as full)", g.local, t1.Add(100*time.Second).Sub(now))
		}
	})
}

// memEntry.spaced, the mark of the latest next start copied from the
// Store, was an absolute instant that nothing lowered: not the fallback's
// clock-back bound (acquireAt bounds rateNext to now+1/MaxRate), nor a
// local Forget of an entry in use (which reset mirror, not spaced). After
// a wall-clock step back, every next start the fallback itself set
// granting a request was below the mark for as long as the step, and was
// never carried to the Store: a Store whose state no longer spaced the key
// (another process's Budget.Forget) granted at once, 0.5 s after the
// fallback's grant under MaxRate 1.
func TestFallbackSpacingAfterClockStepBackCarried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, b, o, k, back := steppedBackAfterStoreGrant(t)
		var g lease
		h, ok, _, _ := b.acquire(t.Context(), k, back, control.Ask{}, &g)
		if ok || h.Until().Sub(back) > time.Second {
			t.Fatalf("setup: clock stepped back, Store failing: granted %v, held %v; want held one spacing", ok, h.Until().Sub(back))
		}
		at := back.Add(time.Second)
		grantRelease(t, b, k, at, true)
		st.failing.Store(false)
		o.Forget("http://api.test") // clears the Store's state
		now := at.Add(500 * time.Millisecond)
		g = lease{}
		if _, ok, _, _ := b.acquire(t.Context(), k, now, control.Ask{}, &g); ok {
			t.Errorf("MaxRate 1: the Store granted %v after the fallback's grant (local %v); want held until %v: the fallback's own next start was not carried (below the mark copied before the clock step)", now.Sub(at), g.local, at.Add(time.Second).Sub(now))
		}
	})
}

// The Store's MaxRate spacing is copied into the fallback (its mark an
// instant of the clock before a step back). The clock steps back 48 h and
// the Store fails: the fallback holds the key, and its clock-back bound
// lowers the copy to one spacing from the new now; the fallback grants
// nothing of its own. The Store answers again and another process forgets
// the key. The bounded copy, below the mark, was first read as the
// fallback's own spacing and carried back into the Store: the forgotten
// spacing held the key again.
func TestClockBoundedSpacingCopyNotCarried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, b, o, k, back := steppedBackAfterStoreGrant(t)
		var g lease
		if _, ok, _, _ := b.acquire(t.Context(), k, back, control.Ask{}, &g); ok {
			t.Fatalf("setup: clock stepped back, Store failing: the fallback granted (local %v); want it held one spacing", g.local)
		}
		st.failing.Store(false)
		o.Forget("http://api.test") // clears the Store's state
		now := back.Add(500 * time.Millisecond)
		g = lease{}
		h, ok, _, _ := b.acquire(t.Context(), k, now, control.Ask{}, &g)
		if !ok {
			t.Errorf("after Budget.Forget in another process (shared Store), the fallback having granted nothing itself: held %v (%v) by the Store's own spacing copied back from the fallback; want granted fresh", h.Until().Sub(now), h.Reason)
		}
	})
}

// A request the fallback granted while the Store failed sets MaxRate's
// next start in this process's fallback only. Its release, once the Store
// answered again, carried a pause it learned to the Store, but not that
// spacing, which reached the Store only with this process's next request
// for the key, which may never come: another process sharing the Store,
// asking after the recovery, started at once, closer than 1/MaxRate to the
// fallback's start.
func TestFallbackSpacingCarriedAtRecoveryRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		a := &Budget{Store: st, MaxRate: 0.2} // one start per 5 s
		o := &Budget{Store: st, MaxRate: 0.2} // another process
		a.init()
		o.init()
		k := originKey("http", "api.test")
		st.failing.Store(true)
		t0 := time.Now()
		var g lease
		if _, ok, _, _ := a.acquire(t.Context(), k, t0, control.Ask{}, &g); !ok || !g.local {
			t.Fatalf("setup: Store failing: granted %v, local %v; want granted by the fallback", ok, g.local)
		}
		st.failing.Store(false)
		time.Sleep(2 * time.Second) // the Store answers again; a's retry is due
		n := st.updates.Load()
		a.release(t.Context(), k, &g, time.Now(), &control.Outcome{First: true})
		carried := st.updates.Load() - n
		time.Sleep(500 * time.Millisecond)
		now := time.Now()
		var h lease
		if _, ok, _, _ := o.acquire(t.Context(), k, now, control.Ask{}, &h); ok {
			t.Errorf("MaxRate 0.2 (5s), shared Store answering again: another process started %v after the fallback's start (its release after the recovery made %d Store updates); want it held %v more",
				now.Sub(t0), carried, t0.Add(5*time.Second).Sub(now))
		}
	})
}

// grantRelease has b grant k a request at at, by its fallback if local,
// else by its Store, and release it answered.
func grantRelease(t *testing.T, b *Budget, k budgetKey, at time.Time, local bool) {
	t.Helper()
	var g lease
	if _, ok, _, _ := b.acquire(t.Context(), k, at, control.Ask{}, &g); !ok || g.local != local {
		t.Fatalf("request at %v: granted %v, by the fallback %v; want granted, by the fallback %v", at, ok, g.local, local)
	}
	b.release(t.Context(), k, &g, at, &control.Outcome{First: true})
}

// steppedBackAfterStoreGrant makes two Budgets sharing a Store: b, under a
// MaxRate of 1, whose Store granted a request now, and o, another
// process's, with no MaxRate (its Forget clears b's spacing from the
// Store, which a Budget with one keeps). The Store fails then, and the clock steps back 48 h, to back.
func steppedBackAfterStoreGrant(t *testing.T) (st *downStore, b, o *Budget, k budgetKey, back time.Time) {
	st = &downStore{}
	b = &Budget{Store: st, MaxRate: 1}
	o = &Budget{Store: st} // no MaxRate of its own: its Forget clears the spacing
	b.init()
	k = originKey("http", "api.test")
	t0 := time.Now()
	grantRelease(t, b, k, t0, false)
	st.failing.Store(true)
	return st, b, o, k, t0.Add(-48 * time.Hour)
}

// blipStore is a shared Store (a MemoryStore behind the Store interface)
// whose next failNext Updates fail: one call's blip, a Redis that answered
// a moment after its Timeout, or ErrContention.
type blipStore struct {
	m        MemoryStore
	failNext atomic.Int64
}

func (s *blipStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	if s.failNext.Add(-1) >= 0 {
		return errors.New("store: no reply within Timeout")
	}
	return s.m.Update(ctx, key, fn)
}

func (s *blipStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.m.Wait(ctx, key, gen, until)
}

// A request the Store granted is refused with Retry-After: 3600 (longer
// than MaxWait: handed back, unretried), and the Store fails the one call
// that releases it (a blip). The refusal's pause stayed in this process's
// fallback: nothing carried it to the Store, not even once the Store
// answered this process again (EventStoreUp), and another process sharing
// the Store went on sending to the origin for the hour.
func TestReleaseFailurePauseShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &blipStore{}
		refusing := storeRT(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host != "api.test" {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			st.failNext.Store(1) // the release's Update fails, and that one only
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
		})
		other := &startLog{}
		var kinds storeKinds
		a := &Transport{Base: refusing, Budget: &Budget{Store: st}, OnEvent: kinds.add} // one process
		b := &Transport{Base: other, Budget: &Budget{Store: st}}                        // another, sharing the Store
		storeGet(t, b)
		storeGet(t, a) // granted by the Store, refused, its release fails: handed back
		// a itself holds the key: its fallback learned the pause.
		if st, ok := a.Budget.Inspect("http://api.test", time.Now()); !ok || !st.PauseUntil.After(time.Now().Add(50*time.Minute)) {
			t.Fatalf("a's own view: %+v, want paused for the hour", st)
		}
		time.Sleep(2 * time.Second)
		// The Store answers a again (another key): EventStoreUp.
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://other.test/", nil)
		if resp, err := a.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
		before := len(other.at)
		for range 10 {
			time.Sleep(time.Minute)
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			if resp, err := b.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		if n := len(other.at) - before; n > 0 {
			t.Errorf("another process sent to the origin %d times of 10 in the first ten minutes of a Retry-After: 3600 this one was told (store events in a: %v)", n, kinds.list())
		}
	})
}

// hungStore is a shared Store that, once hung, answers no call: each
// Update waits out a Timeout of the Store's own (250 ms, redisstore's
// default) and fails, counted.
type hungStore struct {
	m     MemoryStore
	hung  atomic.Bool
	calls atomic.Int64 // Updates made while hung
}

func (s *hungStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	if s.hung.Load() {
		s.calls.Add(1)
		if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
			return err
		}
		return errors.New("store: no reply within its Timeout")
	}
	return s.m.Update(ctx, key, fn)
}

func (s *hungStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.m.Wait(ctx, key, gen, until)
}

// The Store hangs; the fallback grants requests. One is refused
// (Retry-After: 3600, handed back), and the carry of its pause fails.
// Every other request in flight then answered 200, teaching nothing: each
// release found the pause not carried yet and tried the Store again, one
// call per request, each response held in RoundTrip for the Store's
// timeout, though the Budget knew the Store was down.
func TestCarryNotPerRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &hungStore{}
		gate := make(chan struct{})    // the answers that teach nothing
		refuse := make(chan struct{})  // the refusal
		refused := make(chan struct{}) // its RoundTrip returned
		var inflight atomic.Int64
		base := storeRT(func(r *http.Request) (*http.Response, error) {
			if r.Header.Get("X-Hold") != "" {
				inflight.Add(1)
			}
			if r.Header.Get("X-Refuse") != "" {
				<-refuse
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
			}
			if r.Header.Get("X-Hold") != "" {
				<-gate
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		var downs atomic.Int64
		tr := &Transport{Base: base, Budget: &Budget{Store: st}, OnEvent: func(e Event) {
			if e.Kind == EventStoreDown {
				downs.Add(1)
			}
		}}
		storeGet(t, tr) // through the Store: probed
		st.hung.Store(true)
		storeGet(t, tr) // the Store hangs (250 ms): EventStoreDown, the fallback grants
		time.Sleep(10 * time.Millisecond)
		storeGet(t, tr) // the fallback's probe
		callsBefore := st.calls.Load()

		const n = 6 // as many as the fallback's ramp-up lets go at once
		var wg sync.WaitGroup
		var mu sync.Mutex
		var took []time.Duration
		var answered time.Time // when the 200s were let go
		for i := range n {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
				req.Header.Set("X-Hold", "1")
				if i == 0 {
					req.Header.Set("X-Refuse", "1")
				}
				resp, err := tr.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
				if i == 0 {
					close(refused)
				} else {
					mu.Lock()
					took = append(took, time.Since(answered))
					mu.Unlock()
				}
			})
			synctest.Wait()
		}
		if inflight.Load() != n {
			close(refuse)
			close(gate)
			t.Fatalf("%d in flight, want %d", inflight.Load(), n)
		}
		close(refuse) // refused first: the pause, whose carry fails
		<-refused
		mu.Lock()
		answered = time.Now()
		mu.Unlock()
		close(gate) // then the others answer 200
		wg.Wait()
		calls := st.calls.Load() - callsBefore
		var longest time.Duration
		for _, d := range took {
			longest = max(longest, d)
		}
		t.Logf("store-down events: %d; Store calls for one pause: %d; longest of them held after its answer: %v", downs.Load(), calls, longest)
		if calls > 1 {
			t.Errorf("one pause learned while the Store hung cost %d Store calls (one per request released during it), want 1; %d answers that taught nothing were each held up to %v in RoundTrip", calls, n-1, longest)
		}
		time.Sleep(time.Second) // the carry in flight ends
	})
}
