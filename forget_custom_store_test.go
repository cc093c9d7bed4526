package polite_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// outsideMemoryStore is a MemoryStore the Budget does not know for one:
// it goes through the Store interface, as any other Store does.
type outsideMemoryStore struct{ *polite.MemoryStore }

// Budget.Inspect: "a custom key shaped like a URL ("https://api.example/a")
// is itself when b holds a state for it, and only then the origin it
// names"; Budget.Forget "clears what b knows of key", and reads the key
// the same way. Once the custom key u is forgotten, b holds no state for
// it: Inspect(u) names the origin, and a second Forget(u) clears the
// origin. With the in-memory store it does; with a Store, the state
// Forget leaves behind (its generation and an expiry, kept for the
// waiters) was taken for a state of u: Inspect(u) showed u's blank state
// by its fingerprint, hiding the origin's pause, and Forget(u) cleared
// that blank state again and again, never the origin.
func TestForgottenCustomKeyOnStoreIsNoState(t *testing.T) {
	for _, name := range []string{"MemoryStore", "MemoryStore as a Store", "Store"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					h := http.Header{}
					status := 200
					if r.Header.Get("X-Refuse") != "" {
						h.Set("Retry-After", "1200")
						status = http.StatusTooManyRequests
					}
					return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: 2, Request: r}, nil
				})
				budget := &polite.Budget{}
				switch name {
				case "MemoryStore as a Store":
					budget.Store = outsideMemoryStore{&polite.MemoryStore{}}
				case "Store":
					budget.Store = newBytesStore()
				}
				byOrigin := &polite.Transport{Base: base, Budget: budget, MaxAttempts: 1}
				byURL := &polite.Transport{Base: base, Budget: budget, Key: func(r *http.Request) string { return r.URL.String() }}
				const u = "https://api.example/items/1"

				req, _ := http.NewRequest(http.MethodGet, u, nil)
				req.Header.Set("X-Refuse", "1")
				resp, err := byOrigin.RoundTrip(req) // the origin is paused for 20 minutes
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				req, _ = http.NewRequest(http.MethodGet, u, nil)
				if resp, err = byURL.RoundTrip(req); err != nil { // a custom key, u itself
					t.Fatal(err)
				}
				resp.Body.Close()

				budget.Forget(u) // u's state: the origin's stays
				st, ok := budget.Inspect(u, time.Now())
				if !ok || st.Key != "https://api.example" || st.PauseUntil.IsZero() {
					t.Errorf("after Forget(%q) of the custom key, Inspect(%q) = key %q, paused until %v, %v; want the paused origin, which b holds, u's state being forgotten",
						u, u, st.Key, st.PauseUntil, ok)
				}
				budget.Forget(u) // now the origin's
				if st, ok := budget.Inspect("https://api.example", time.Now()); ok && !st.PauseUntil.IsZero() {
					t.Errorf("after a second Forget(%q), with no state held for the custom key, the origin is still paused for %v", u, time.Until(st.PauseUntil))
				}
			})
		})
	}
}

// hookStore is a bytesStore whose Update calls before, if set, first:
// outside the store's lock, as a call on its way to a remote store is.
type hookStore struct {
	*bytesStore
	mu     sync.Mutex
	before func(key string)
}

// holdNext holds the next Update (of key, unless key is empty) on its way
// to the store until gate is closed; arrived is closed once it is held.
func (s *hookStore) holdNext(key string) (arrived, gate chan struct{}) {
	arrived, gate = make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	s.mu.Lock()
	defer s.mu.Unlock()
	s.before = func(k string) {
		if (key == "" || k == key) && first.CompareAndSwap(false, true) {
			close(arrived)
			<-gate
		}
	}
	return arrived, gate
}

func (s *hookStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	s.mu.Lock()
	h := s.before
	s.mu.Unlock()
	if h != nil {
		h(key)
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// A pause this process learned while its Store was down is carried into
// the Store by the next request, from what the fallback held when that
// request began. A Forget that runs while that request's Update is on its
// way clears the fallback and the Store, and the Update does not write the
// forgotten pause back (it did: after Forget had returned, the key was
// paused again for the refusal's whole minute, with no answer from the
// server since).
func TestForgetNotUndoneByCarriedPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &hookStore{bytesStore: newBytesStore()}
		b := &polite.Budget{Store: st}
		refuse := true
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if refuse {
				refuse = false
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"60"}}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, Budget: b, MaxAttempts: 1}
		get := func() {
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		// The Store is down: the refusal pauses the fallback, and no
		// carry reaches the Store.
		st.failing.Store(true)
		get()
		synctest.Wait()
		if p, _ := b.Inspect("http://api.test", time.Now()); time.Until(p.PauseUntil) < 50*time.Second {
			t.Fatalf("after the refusal: paused for %v, want a minute", time.Until(p.PauseUntil))
		}
		time.Sleep(2 * time.Second) // past the Store's retry
		synctest.Wait()
		st.failing.Store(false)

		// The next request carries the pause: its Update is delayed on
		// its way, while Forget runs.
		arrived, gate := st.holdNext("")
		go get()
		<-arrived
		b.Forget("http://api.test") // returns: the fallback and the Store are cleared
		if p, _ := b.Inspect("http://api.test", time.Now()); !p.PauseUntil.IsZero() {
			t.Fatalf("right after Forget: paused until %v", p.PauseUntil)
		}
		close(gate)
		synctest.Wait()
		if p, _ := b.Inspect("http://api.test", time.Now()); !p.PauseUntil.IsZero() {
			t.Errorf("after Forget returned, with no answer from the server since, the key is paused for %v: the forgotten pause was written back into the Store", time.Until(p.PauseUntil))
		}
		time.Sleep(2 * time.Minute) // what still runs ends
	})
}

// forgetCarrySetup: two processes (Budgets) share st. Process 1 learns a
// minute's pause for a.test while st is down; st answers again; a Forget
// of another key, b.test, is then held inside its Store call until the
// returned release is called.
func forgetCarrySetup(t *testing.T) (st *hookStore, tr1, tr2 *polite.Transport, sentA *atomic.Int64, get func(tr *polite.Transport, url string), release func()) {
	st = &hookStore{bytesStore: newBytesStore()}
	b1 := &polite.Budget{Store: st}
	b2 := &polite.Budget{Store: st}
	sentA = new(atomic.Int64)
	var refused atomic.Bool
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "a.test" {
			sentA.Add(1)
			if refused.CompareAndSwap(false, true) {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"60"}}, Body: http.NoBody, Request: r}, nil
			}
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	tr1 = &polite.Transport{Base: base, Budget: b1, MaxAttempts: 1}
	tr2 = &polite.Transport{Base: base, Budget: b2, MaxAttempts: 1}
	get = func(tr *polite.Transport, url string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}
	st.failing.Store(true)
	get(tr1, "http://a.test/")
	synctest.Wait()
	time.Sleep(2 * time.Second)
	synctest.Wait()
	st.failing.Store(false)
	if n := sentA.Load(); n != 1 {
		t.Fatalf("setup: a.test sent %d, want 1", n)
	}

	arrived, gate := st.holdNext("http://b.test")
	go tr1.Budget.Forget("http://b.test")
	<-arrived
	return st, tr1, tr2, sentA, get, func() { close(gate); synctest.Wait() }
}

// A Forget of another key, b.test, running while process 1's next request
// to a.test asks the Store: the pause a.test's server set a second ago
// (Retry-After: 60), learned while the Store was down, is carried, and the
// request is held (skipped while any Forget ran, the carry let the Store
// grant it, inside the pause).
func TestForgetOtherKeyKeepsPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, tr1, _, sentA, get, release := forgetCarrySetup(t)
		go get(tr1, "http://a.test/")
		synctest.Wait()
		if n := sentA.Load() - 1; n != 0 {
			t.Errorf("while a Forget of b.test ran, %d request(s) to a.test were sent inside its 60 s Retry-After pause (2 s in)", n)
		}
		release()
		time.Sleep(2 * time.Minute)
	})
}

// The background carry (carryUncarried) of a.test's pause, started by a
// request to another key, c.test, runs while a Forget of b.test runs: the
// pause reaches the Store, and process 2, sharing it, does not send to
// a.test inside the pause (skipped for any Forget, the carry was taken as
// done, and the pause never reached the Store).
func TestForgetOtherKeyKeepsUncarriedPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, tr1, tr2, sentA, get, release := forgetCarrySetup(t)
		get(tr1, "http://c.test/") // starts the carry of a.test's pause
		synctest.Wait()
		release()
		get(tr1, "http://c.test/") // the Store answers: any carry still listed would run now
		synctest.Wait()
		time.Sleep(2 * time.Second)
		get(tr1, "http://c.test/")
		synctest.Wait()
		get(tr2, "http://a.test/")
		synctest.Wait()
		if n := sentA.Load() - 1; n != 0 {
			t.Errorf("another process sharing the Store sent %d request(s) to a.test inside its 60 s Retry-After pause (%v in): the pause process 1 learned was never carried to the Store", n, "4s")
		}
		time.Sleep(2 * time.Minute)
	})
}

// A request carrying a 60 s pause (learned while the Store was down) has
// its Update delayed; meanwhile Forget clears the fallback and the Store,
// the Store fails again, and the server answers another request with a
// 5 s Retry-After, which the fallback learns. The delayed Update carries
// what the fallback holds then, the 5 s pause, not the forgotten 60 s one
// (checking only that the fallback still held a pause, it wrote the
// forgotten one).
func TestForgottenPauseNotCarriedWhenAnotherLearned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &hookStore{bytesStore: newBytesStore()}
		b := &polite.Budget{Store: st}
		var retryAfter atomic.Value
		retryAfter.Store("60")
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if ra, _ := retryAfter.Swap("").(string); ra != "" {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {ra}}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, Budget: b, MaxAttempts: 1}
		get := func() {
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		st.failing.Store(true)
		get() // 429, 60 s, learned by the fallback only
		synctest.Wait()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		st.failing.Store(false)

		arrived, gate := st.holdNext("")
		go get() // carries the 60 s pause; its Update is held
		<-arrived
		b.Forget("http://api.test")

		st.failing.Store(true)
		retryAfter.Store("5")
		get() // sent from the fallback (key forgotten): 429, 5 s
		synctest.Wait()
		p, _ := b.Inspect("http://api.test", time.Now())
		t.Logf("fallback after the second refusal: paused for %v", time.Until(p.PauseUntil))
		time.Sleep(2 * time.Second)
		synctest.Wait()
		st.failing.Store(false)
		close(gate)
		synctest.Wait()
		if p, _ := b.Inspect("http://api.test", time.Now()); time.Until(p.PauseUntil) > 10*time.Second {
			t.Errorf("after Forget and a 5 s Retry-After since, the key is paused for %v: the forgotten 60 s pause was written into the Store", time.Until(p.PauseUntil))
		}
		time.Sleep(3 * time.Minute)
	})
}
