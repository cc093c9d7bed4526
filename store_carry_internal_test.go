package polite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// latencyStore is a shared Store (a MemoryStore behind the Store
// interface): while failing, each Update fails at once; otherwise each
// takes latency (a round trip to a remote Redis) and succeeds, or returns
// ctx's error if ctx ends first.
type latencyStore struct {
	m        MemoryStore
	failing  atomic.Bool
	latency  atomic.Int64 // nanoseconds
	calls    atomic.Int64
	failures atomic.Int64 // errors of the Store's own (not ctx's)
}

func (s *latencyStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	s.calls.Add(1)
	if s.failing.Load() {
		s.failures.Add(1)
		return errors.New("store: connection refused")
	}
	if err := sleepCtx(ctx, time.Duration(s.latency.Load())); err != nil {
		return err
	}
	return s.m.Update(ctx, key, fn)
}

func (s *latencyStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.m.Wait(ctx, key, gen, until)
}

// The carry goroutine bounded all its carries together by one 10 s
// context. After an outage in which 64 origins were refused (a 429 wave),
// a healthy Store answering each call in 200 ms had carried 50 of them
// when that context ended; the 51st call returned the goroutine's own
// context error, recorded as the Store failing: the Budget left a Store
// that answered every call for a second, pacing every key on memory
// alone, and the last pauses stayed uncarried.
func TestCarryBoundPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &latencyStore{}
		base := storeRT(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host != "other.test" && r.URL.Host != "next.test" {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		var events storeKinds
		b := &Budget{Store: st}
		tr := &Transport{Base: base, Budget: b, OnEvent: events.add}
		get := func(host string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}

		// An outage: 64 origins refused for an hour on the fallback.
		st.failing.Store(true)
		for i := range maxUncarried {
			get("o" + strconv.Itoa(i) + ".test")
			synctest.Wait()
		}
		if n := b.uncarried.n.Load(); n != maxUncarried {
			t.Fatalf("uncarried: %d, want %d", n, maxUncarried)
		}

		// The Store is back, healthy, 200 ms a call.
		st.failing.Store(false)
		st.latency.Store(int64(200 * time.Millisecond))
		time.Sleep(1500 * time.Millisecond)
		failuresBefore := st.failures.Load()
		t0 := time.Now()
		get("other.test") // answered: starts the carry of the 64
		time.Sleep(time.Until(t0.Add(10*time.Second + 300*time.Millisecond)))

		// The Store answered every call since it came back; the next
		// request goes to it.
		before := st.calls.Load()
		get("next.test")
		calls := st.calls.Load() - before
		left := b.uncarried.n.Load()
		own := st.failures.Load() - failuresBefore
		time.Sleep(20 * time.Second) // the carry in flight ends
		if calls == 0 {
			t.Errorf("a Store that answered every call (%d failures of its own since it came back) was left: the next request made %d Store calls (paced on the fallback alone), %d pauses still uncarried; events %v", own, calls, left, events.list())
		}
	})
}

// keyBlipStore is a shared Store (a MemoryStore behind the Store
// interface) whose next fails Updates of key failKey fail, each after
// 50 ms (a Redis that answered a moment after its Timeout).
type keyBlipStore struct {
	m       MemoryStore
	failKey atomic.Value // string
	fails   atomic.Int64
	calls   atomic.Int64
}

func (s *keyBlipStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	s.calls.Add(1)
	if k, _ := s.failKey.Load().(string); k == key && s.fails.Add(-1) >= 0 {
		time.Sleep(50 * time.Millisecond)
		return errors.New("store: no reply within Timeout")
	}
	return s.m.Update(ctx, key, fn)
}

func (s *keyBlipStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.m.Wait(ctx, key, gen, until)
}

// The carry goroutine recorded a failure as Inspect does, with no event.
// When it was the first to find the Store failing (after the Store
// answered a request: EventStoreUp), every request of the next second
// went on with the fallback, pacing by this process alone, and no
// EventStoreDown was reported for it: an operator counting EventStoreDown
// saw the Store up while this process paced unshared.
func TestCarryFailureLeavesStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &keyBlipStore{}
		base := storeRT(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == "api.test" {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		var events storeKinds
		tr := &Transport{Base: base, Budget: &Budget{Store: st}, OnEvent: events.add}
		get := func(host string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		// api.test refused for an hour; the release's Update fails (its
		// second call of the key): EventStoreDown; the pause is listed.
		st.fails.Store(0)
		st.failKey.Store("http://api.test")
		var n atomic.Int64
		base2 := tr.Base
		tr.Base = storeRT(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == "api.test" && n.Add(1) == 1 {
				st.fails.Store(1) // the release's Update fails
			}
			return base2.RoundTrip(r)
		})
		get("api.test")
		time.Sleep(2 * time.Second)

		// The Store answers a request of other.test: EventStoreUp. The
		// carry it starts meets one more blip.
		st.fails.Store(1)
		get("other.test")
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		atUp := len(events.list())

		// The next requests, within the second.
		before := st.calls.Load()
		for range 5 {
			get("other.test")
			time.Sleep(100 * time.Millisecond)
		}
		calls := st.calls.Load() - before
		time.Sleep(2 * time.Second)
		get("other.test") // the Store answers
		time.Sleep(11 * time.Second)
		downs := 0
		for _, k := range events.list()[atUp:] {
			if k == EventStoreDown {
				downs++
			}
		}
		if calls == 0 && downs == 0 {
			t.Errorf("5 requests went on with the fallback (%d Store calls), paced by this process alone, and no EventStoreDown was reported for it: events %v", calls, events.list())
		}
	})
}

// scriptedStore is a shared Store (a MemoryStore behind the Store
// interface) whose calls the test scripts: script, when set, says for each
// Update how long it takes and whether it fails.
type scriptedStore struct {
	m      MemoryStore
	mu     sync.Mutex
	script func(key string) (time.Duration, error)
	calls  atomic.Int64
}

func (s *scriptedStore) set(f func(key string) (time.Duration, error)) {
	s.mu.Lock()
	s.script = f
	s.mu.Unlock()
}

func (s *scriptedStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	s.calls.Add(1)
	s.mu.Lock()
	f := s.script
	s.mu.Unlock()
	if f != nil {
		d, err := f(key)
		if err := sleepCtx(ctx, d); err != nil {
			return err
		}
		if err != nil {
			return err
		}
	}
	return s.m.Update(ctx, key, fn)
}

func (s *scriptedStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.m.Wait(ctx, key, gen, until)
}

var errScripted = errors.New("store: no reply within its Timeout")

// A key whose pause was forgotten (Budget.Forget) stays on the uncarried
// list when the last carry failed. The next carry goroutine found nothing
// to carry for it, called no Store, and yet recorded that the Store
// answered: a failure Inspect found a moment before (the fallback for a
// second) was wiped, and requests within that second went to a hung
// Store, each held for its timeout.
func TestCarryOfNothingRecordsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &scriptedStore{}
		base := storeRT(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == "x.test" || r.URL.Host == "y.test" {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		var events storeKinds
		b := &Budget{Store: st}
		tr := &Transport{Base: base, Budget: b, OnEvent: events.add}
		get := func(host string) time.Duration {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return time.Since(start)
		}

		// 1. x.test is granted by the Store and refused for an hour; the
		// call that releases it fails (a blip), and so does the carry
		// that release starts: the pause stays in the fallback, listed
		// to be carried. (The carry runs in a goroutine of its own:
		// allowed to succeed, it took the key off the list before the
		// check below, now and then, under the race detector.)
		var xCalls atomic.Int64
		st.set(func(key string) (time.Duration, error) {
			if key == "http://x.test" && xCalls.Add(1) >= 2 {
				return 0, errScripted
			}
			return 0, nil
		})
		get("x.test")
		synctest.Wait()
		if n := b.uncarried.n.Load(); n != 1 {
			t.Fatalf("uncarried: %d, want 1", n)
		}

		// 2. A second later the Store answers a request of w.test, which
		// starts the carry; that carry fails slowly (the Store hangs for
		// it): recorded as Inspect records it, the Budget goes to its
		// fallback for a second. x.test stays listed.
		time.Sleep(1100 * time.Millisecond)
		st.set(func(key string) (time.Duration, error) {
			if key == "http://x.test" || key == "http://v.test" {
				return 250 * time.Millisecond, errScripted
			}
			return 0, nil
		})
		get("w.test")
		time.Sleep(300 * time.Millisecond)
		synctest.Wait()
		b.Inspect("http://v.test", time.Now()) // finds the Store failing
		if d := b.down.Load(); d >= 0 {
			t.Fatalf("down = %d after Inspect found the Store failing, want < 0", d)
		}

		// 3. x.test is forgotten: nothing left to carry for it, but it
		// stays first on the list.
		st.set(nil)
		tr.Budget.Forget("http://x.test")

		// 4. The Store hangs. Within the second the Budget goes on
		// without it, y.test is refused for an hour on the fallback:
		// its release lists it and starts the carry.
		st.set(func(string) (time.Duration, error) { return 250 * time.Millisecond, errScripted })
		if b.useExt(time.Now()) {
			t.Fatalf("the Budget would use the Store within its retry second")
		}
		get("y.test")
		synctest.Wait()

		// 5. Still within the second the Budget should not try the
		// Store, a request of z.test.
		before := st.calls.Load()
		took := get("z.test")
		calls := st.calls.Load() - before
		time.Sleep(11 * time.Second) // the carry in flight ends
		if took > 0 || calls > 0 {
			t.Errorf("within the second after the Store was found failing, a request called the hung Store %d times and was held %v (events %v): the carry goroutine recorded the Store as answering for a forgotten key it never asked the Store about", calls, took, events.list())
		}
	})
}

// storeKinds records the EventStoreDown and EventStoreUp a Transport
// reports, in order.
type storeKinds struct {
	mu    sync.Mutex
	kinds []EventKind
}

func (k *storeKinds) add(e Event) {
	if e.Kind == EventStoreDown || e.Kind == EventStoreUp {
		k.mu.Lock()
		k.kinds = append(k.kinds, e.Kind)
		k.mu.Unlock()
	}
}

func (k *storeKinds) list() []EventKind {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.kinds)
}

// sleepCtx waits d, or until ctx ends: then it returns ctx.Err().
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// gateStore is a MemoryStore whose Update for a.test's key, while armed,
// blocks until the test opens the gate, then fails (fail) or goes on.
type gateStore struct {
	m       MemoryStore
	fail    bool
	failing atomic.Bool
	armed   atomic.Bool
	entered chan struct{}
	gate    chan struct{}
}

func (s *gateStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	if s.failing.Load() {
		return errors.New("store: connection refused")
	}
	if strings.Contains(key, "a.test") && s.armed.CompareAndSwap(true, false) {
		s.entered <- struct{}{}
		<-s.gate
		if s.fail {
			return errors.New("store: refused")
		}
	}
	return s.m.Update(ctx, key, fn)
}

func (s *gateStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.m.Wait(ctx, key, gen, until)
}

// carryingA returns a Budget over a gateStore (failing the gated call if
// fail) whose pause for a.test, refused for an hour while the Store was
// down, is being carried now, its Store call held at the gate; get sends a
// GET of a host through the Budget's Transport, and k is a.test's key.
func carryingA(t *testing.T, fail bool) (b *Budget, st *gateStore, get func(string), k budgetKey) {
	st = &gateStore{fail: fail, entered: make(chan struct{}), gate: make(chan struct{})}
	base := storeRT(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "c.test" {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
	})
	b = &Budget{Store: st}
	tr := &Transport{Base: base, Budget: b}
	get = func(host string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}
	st.failing.Store(true)
	get("c.test")
	get("a.test")
	synctest.Wait()
	b.uncarried.mu.Lock()
	if len(b.uncarried.keys) != 1 {
		b.uncarried.mu.Unlock()
		t.Fatalf("setup: %d uncarried", len(b.uncarried.keys))
	}
	k = b.uncarried.keys[0].k
	b.uncarried.mu.Unlock()
	st.failing.Store(false)
	time.Sleep(3 * time.Second)
	st.armed.Store(true)
	go get("c.test") // answered: carries a.test, whose call blocks
	<-st.entered
	return b, st, get, k
}

// carryUncarried took the head out of Budget.uncarried while its carry
// ran. keepUncarried, called meanwhile for the same key (a request to it
// released on the fallback), found no entry and added one; the carry
// failed and put the head back: the key was listed twice. Adjacent, its
// two entries failed in a row at every run, which reads as the Store
// down: the key was never blamed nor dropped, and each took a slot of the
// 64. The head stays listed while it is carried.
func TestCarryKeyListedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, st, _, k := carryingA(t, true)
		added := b.keepUncarried(k, time.Now()) // a request to a.test released on the fallback meanwhile
		close(st.gate)
		synctest.Wait()
		b.uncarried.mu.Lock()
		n := 0
		for _, o := range b.uncarried.keys {
			if o.k.m == k.m {
				n++
			}
		}
		b.uncarried.mu.Unlock()
		if n > 1 {
			t.Errorf("a.test is in Budget.uncarried %d times (keepUncarried during its carry added it: %v)", n, added)
		}
	})
}

// outageOnAStore fails at once while failing; armed, a.test's Update
// begins an outage (fails, and every call after it).
type outageOnAStore struct {
	m       MemoryStore
	failing atomic.Bool
	armed   atomic.Bool
}

func (s *outageOnAStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	if strings.Contains(key, "a.test") && s.armed.CompareAndSwap(true, false) {
		s.failing.Store(true)
	}
	if s.failing.Load() {
		return errors.New("store: connection refused")
	}
	return s.m.Update(ctx, key, fn)
}

func (s *outageOnAStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.m.Wait(ctx, key, gen, until)
}

// a.test's carry fails as an outage begins; the key after it, b<i>.test,
// has nothing left to carry (its 1 s pause is over), so carryTo returns
// (false, nil) without calling the Store. carryUncarried blamed a.test as
// if b<i>'s carry had shown the Store answering: three outages dropped
// a.test, and its hour-long pause was never carried. Only a carry the
// Store took blames the one that failed before it.
func TestCarryBlamesOnlyForAStoreCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &outageOnAStore{}
		base := storeRT(func(r *http.Request) (*http.Response, error) {
			ra := "3600"
			if strings.HasPrefix(r.URL.Host, "b") {
				ra = "1"
			}
			if r.URL.Host == "c.test" {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {ra}}, Body: http.NoBody, Request: r}, nil
		})
		b := &Budget{Store: st}
		tr := &Transport{Base: base, Budget: b}
		get := func(host string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
			synctest.Wait()
		}
		list := func() (hosts []string, blamedA int) {
			b.uncarried.mu.Lock()
			defer b.uncarried.mu.Unlock()
			for _, o := range b.uncarried.keys {
				hosts = append(hosts, o.k.m.String())
				if strings.Contains(o.k.m.String(), "a.test") {
					blamedA = o.blamed
				}
			}
			return
		}
		st.failing.Store(true)
		get("c.test")
		get("a.test")
		for i := range 3 {
			st.failing.Store(true)
			get("b" + string(rune('0'+i)) + ".test")
			time.Sleep(10 * time.Second)
			st.failing.Store(false)
			st.armed.Store(true)
			before, _ := list()
			b.carryUncarried() // as a request the Store answered would
			synctest.Wait()
			after, blamed := list()
			t.Logf("round %d: list %v -> %v, a.test blamed %d", i, before, after, blamed)
		}
		hosts, _ := list()
		found := false
		for _, h := range hosts {
			found = found || strings.Contains(h, "a.test")
		}
		if !found {
			t.Errorf("a.test dropped from Budget.uncarried (list %v): blamed for three outages by keys with nothing to carry, its hour-long pause never carried", hosts)
		}
	})
}

// While a.test's pause (1 h) is being carried, a request to a.test
// releases on the fallback (the Store failed its call) and learns a longer
// pause (2 h): keepUncarried finds the key listed (the head stays listed
// while carried) and adds nothing. The carry of the 1 h pause succeeded
// and deleted the entry: the 2 h pause, which the Store did not hold, was
// listed nowhere. A key kept again during its carry is carried again.
func TestCarryKeepsPauseLearnedDuringCarry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, st, get, k := carryingA(t, false) // carrying a.test's 1 h pause
		// Meanwhile a request to a.test released on the fallback (its
		// Store call failed) and learned a 2 h pause, as releaseExt does.
		now := time.Now()
		pu2 := now.Add(2 * time.Hour)
		// (The fallback's state learns it as its release does: no mirror.)
		sh := b.fallback.shard(k.m)
		sh.mu.Lock()
		sh.m[k.m].ks.c.PauseUntil(now, &b.cfg, pu2, control.ReasonRetryAfter)
		sh.mu.Unlock()
		added := b.keepUncarried(k, now)
		close(st.gate)
		synctest.Wait()
		time.Sleep(20 * time.Second) // later runs, had it been listed
		get("c.test")
		synctest.Wait()
		pu, _ := b.fallback.learned(k.m, time.Now())
		b.uncarried.mu.Lock()
		listed := len(b.uncarried.keys)
		b.uncarried.mu.Unlock()
		var stored time.Time
		_ = st.m.Update(context.Background(), k.m.String(), func(s *KeyState) { stored, _ = s.c.Paused(time.Now()) })
		t.Logf("keepUncarried during the carry added: %v; fallback's uncarried pause %v; Store's pause %v; listed %d", added, pu.Sub(now), stored.Sub(now), listed)
		if !pu.IsZero() && listed == 0 {
			t.Errorf("a.test's 2 h pause, learned while its 1 h pause was carried, is not in the Store (which holds %v) and not listed to be carried: lost until a.test's own next request", stored.Sub(now).Round(time.Second))
		}
	})
}

// a.test and b.test wait to be carried; a.test, refused again while the
// Store is down, is kept again. It was marked "carried again" then, though
// no carry ran: the next run carried a.test, left it at the head, and
// spent b.test's try on a.test again, b.test's pause not carried though
// the Store answered. A key is marked so only while it is carried, and
// carried again behind the others.
func TestCarryAgainLeavesOthersTheirTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &gateStore{entered: make(chan struct{}), gate: make(chan struct{})}
		var aCalls atomic.Int32
		base := storeRT(func(r *http.Request) (*http.Response, error) {
			switch r.URL.Host {
			case "c.test":
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			case "a.test":
				ra := "3600"
				if aCalls.Add(1) == 1 {
					ra = "2" // retried, refused again for an hour
				}
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {ra}}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
		})
		b := &Budget{Store: st}
		tr := &Transport{Base: base, Budget: b}
		get := func(host string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		st.failing.Store(true)
		get("c.test")
		get("a.test")
		get("b.test")
		synctest.Wait()
		if aCalls.Load() < 2 {
			// No retry by the Transport: the second refusal by hand.
			time.Sleep(3 * time.Second)
			get("a.test")
			synctest.Wait()
		}
		b.uncarried.mu.Lock()
		var keys []string
		again := false
		for _, o := range b.uncarried.keys {
			keys = append(keys, o.k.m.String())
			again = again || o.again
		}
		var bk budgetKey
		if len(b.uncarried.keys) == 2 {
			bk = b.uncarried.keys[1].k
		}
		b.uncarried.mu.Unlock()
		t.Logf("a.test calls %d; listed %v, a marked again %v", aCalls.Load(), keys, again)
		if len(keys) != 2 || again {
			t.Fatalf("setup: listed %v, marked again %v; want 2, none (it is marked so only while carried)", keys, again)
		}
		st.failing.Store(false)
		time.Sleep(10 * time.Second) // past any backoff
		get("c.test")                // answered: one run, a try for each listed key
		synctest.Wait()
		var stored time.Time
		_ = st.m.Update(context.Background(), bk.m.String(), func(s *KeyState) { stored, _ = s.c.Paused(time.Now()) })
		pu, _ := b.fallback.learned(bk.m, time.Now())
		b.uncarried.mu.Lock()
		left := len(b.uncarried.keys)
		b.uncarried.mu.Unlock()
		if stored.IsZero() {
			t.Errorf("the Store answered and a run tried each listed key once, yet %s's pause (%v left on the fallback, %d listed) is not in the Store: the run spent its try on a.test, kept again while the Store was down, carried twice",
				bk.m.String(), time.Until(pu).Round(time.Second), left)
		}
	})
}

// A request refused with Retry-After: 3600, handed back (past MaxWait),
// whose release the Store failed once (a blip), listed the key but started
// no carry: unless this process sent another request the Store answered,
// the pause stayed in this process, and another sharing the Store sent
// for the whole hour. So on both paths: the release's own Update failing
// (granted by the Store), and the carry a release makes after a grant of
// the fallback, once the Store is due again, failing.
func TestReleaseFailureStartsCarry(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprint("fallback=", fallback), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &blipStore{}
				refusing := storeRT(func(r *http.Request) (*http.Response, error) {
					if fallback {
						time.Sleep(2 * time.Second) // the Store is due again when the answer comes
					}
					st.failNext.Store(1) // the release's Update, or its carry, fails: that call only
					return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
				})
				other := &startLog{}
				a := &Transport{Base: refusing, Budget: &Budget{Store: st}} // one process
				b := &Transport{Base: other, Budget: &Budget{Store: st}}    // another, sharing the Store
				storeGet(t, b)
				if fallback {
					st.failNext.Store(1) // a's acquire fails: the fallback grants
				}
				storeGet(t, a)
				time.Sleep(10 * time.Second)
				synctest.Wait()
				if n := other.tenMinutes(t, b, "http://api.test/"); n > 0 {
					t.Errorf("another process sent %d times of 10 in the first ten minutes of a Retry-After: 3600 this one was told: the pause never reached the Store", n)
				}
			})
		})
	}
}

// A carry started while another ran was dropped (one at a time), and the
// run going on counted its keys as it began: a key listed meanwhile was in
// no run. x.test's carry takes 5 s; meanwhile y.test is refused for an
// hour and its release fails once: y was listed, never carried, and
// another process sharing the Store sent to y.test all hour. A run asked
// for during another runs after it.
func TestCarryStartedWhileCarrying(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &scriptedStore{}
		var xCalls, yCalls atomic.Int64
		st.set(func(key string) (time.Duration, error) {
			switch key {
			case "http://x.test":
				switch xCalls.Add(1) {
				case 2:
					return 0, errScripted // x's release fails (a blip)
				case 3:
					return 5 * time.Second, nil // x's carry: slow, then answered
				}
			case "http://y.test":
				if yCalls.Add(1) == 2 {
					return 0, errScripted // y's release fails (a blip)
				}
			}
			return 0, nil
		})
		refusing := storeRT(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
		})
		a := &Transport{Base: refusing, Budget: &Budget{Store: st}} // this process
		other := &startLog{}
		b := &Transport{Base: other, Budget: &Budget{Store: st}} // another process sharing the Store
		get := func(host string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
			if resp, err := a.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}

		get("x.test") // release fails: x listed, its carry starts (5 s)
		time.Sleep(1500 * time.Millisecond)
		get("y.test") // the Store is due again: granted by it, release fails: y listed
		time.Sleep(30 * time.Second)
		synctest.Wait()

		if n := other.tenMinutes(t, b, "http://y.test/"); n > 0 {
			a.Budget.uncarried.mu.Lock()
			left := len(a.Budget.uncarried.keys)
			a.Budget.uncarried.mu.Unlock()
			t.Errorf("another process sent to y.test %d times of 10 in the ten minutes after this one was told Retry-After: 3600 (%d keys still listed uncarried): the carry its failed release started was dropped because x.test's carry was running", n, left)
		}
	})
}
