package polite_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// refuseAll answers every request 429 with a Retry-After of an hour, past
// MaxWait: the refusal is handed back unretried.
type refuseAll struct{ n atomic.Int64 }

func (f *refuseAll) RoundTrip(r *http.Request) (*http.Response, error) {
	f.n.Add(1)
	return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
}

// findStoreDown sends one request, which finds st down (after st.delay) and
// puts the Budget on its fallback for a second.
func findStoreDown(t *testing.T, tr *polite.Transport) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://first.test/", nil)
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
}

// A Store that is down and fails slowly (5 s, as a driver's dial timeout):
// once one request found it down, the requests of the next second go to
// the fallback without touching it (TestSlowFailingStoreTriedASecondLater).
// A refusal's pause learned within that second was carried to the Store
// from the release, in the caller's goroutine: a burst of refusals across
// several origins (a 429 wave during a Redis outage) held every refused
// response for the Store's timeout (up to releaseTimeout, 10 s, for a
// Store with none of its own). The carry goes apart from the request now.
func TestRefusalsNotHeldByDownStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &slowFailStore{bytesStore: newBytesStore(), delay: 5 * time.Second}
		st.down.Store(true)
		base := &refuseAll{}
		tr := &polite.Transport{Base: base, Budget: &polite.Budget{Store: st}}
		findStoreDown(t, tr) // EventStoreDown; the fallback for a second
		before := st.calls.Load()

		const keys = 5
		var wg sync.WaitGroup
		took := make([]time.Duration, keys)
		for i := range keys {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://origin"+string(rune('a'+i))+".test/", nil)
				start := time.Now()
				if resp, err := tr.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
				took[i] = time.Since(start)
			})
		}
		wg.Wait()
		calls := st.calls.Load() - before
		t.Logf("refused responses took %v; Store calls within the retry second: %d", took, calls)
		held := 0
		for _, d := range took {
			if d > 0 {
				held++
			}
		}
		if held > 0 || calls > keys {
			t.Errorf("within the second after the Store was found down, %d of %d refused responses were held (%v), by %d calls of the down Store; want none held, and a call per pause at most", held, keys, took, calls)
		}
		time.Sleep(10 * time.Second) // the carry in flight ends
	})
}

// Several requests on one key, refused together, learn one pause: each
// release found it not carried yet (the last carry failed) and called the
// down Store again, each holding its response for the Store's timeout.
func TestOnePauseOneCarry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &slowFailStore{bytesStore: newBytesStore(), delay: 5 * time.Second}
		st.down.Store(true)
		const n = 4
		var (
			refusing atomic.Bool
			inFlight atomic.Int64
		)
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if !refusing.Load() {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			inFlight.Add(1)
			time.Sleep(100 * time.Millisecond) // all n in flight at once, then refused together
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, Budget: &polite.Budget{Store: st}}
		// The Store found down (5 s); the fallback's answer to api.test
		// opens its state, within the second before the Store is tried again.
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
		refusing.Store(true)
		before := st.calls.Load()
		var wg sync.WaitGroup
		took := make([]time.Duration, n)
		for i := range n {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
				start := time.Now()
				if resp, err := tr.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
				took[i] = time.Since(start)
			})
		}
		wg.Wait()
		calls := st.calls.Load() - before
		t.Logf("%d requests on one key (%d sent together) refused with one Retry-After took %v; Store calls: %d", n, inFlight.Load(), took, calls)
		if calls > 1 {
			t.Errorf("one pause learned by %d requests refused together cost %d calls of the down Store (responses took %v); want at most 1 (\"one call per pause learned, not one per request\")", n, calls, took)
		}
		time.Sleep(10 * time.Second) // the carry in flight ends
	})
}

// longKeyStore is a bytesStore that refuses keys over 2048 bytes, as
// DynamoDB refuses a partition key of more (keyLimitStore in
// inspect_long_key_test.go).
type longKeyStore struct {
	*bytesStore
	refused *atomic.Int64
}

func (s longKeyStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if len(key) > 2048 {
		s.refused.Add(1)
		return errors.New("key too long")
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// A pause learned on the fallback while the Store was marked down is
// carried to the Store by every request the Store answers while the list
// holds a key (DESIGN.md §3), so that other processes do not go on sending
// for its hour. A key the Store always refuses, at the head of the list,
// stopped every carry at its failure: the other keys' pauses stayed in
// this process, and each request the Store answered made one more call
// doomed to fail.
func TestCarryPastKeyStoreRefuses(t *testing.T) {
	long := strings.Repeat("k", 3000)
	for _, order := range [][]string{{"a.test"}, {"a.test", "long.test"}, {"long.test", "a.test"}} {
		t.Run(strings.Join(order, ",")[:min(20, len(strings.Join(order, ",")))], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := longKeyStore{newBytesStore(), new(atomic.Int64)}
				failing := newBytesStore()
				failing.failing.Store(true)
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if r.URL.Host == "c.test" {
						return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
					}
					return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
				})
				key := func(r *http.Request) string {
					if r.URL.Host == "long.test" {
						return long
					}
					return r.URL.Host
				}
				b := &polite.Budget{Store: st}
				tr := &polite.Transport{Base: base, Budget: b, Key: key}
				get := func(host string) {
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
					if resp, err := tr.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
				}
				// The Store down for one call: the Budget on its fallback
				// for a second, within which each host in order is
				// refused for an hour. long.test's key the Store refuses
				// always.
				st.failing.Store(true)
				get("c.test")
				st.failing.Store(false)
				for _, h := range order {
					get(h)
				}
				time.Sleep(2 * time.Second)
				before := st.refused.Load()
				for range 5 {
					get("c.test") // answered by the Store: carries the list
					time.Sleep(time.Second)
				}
				if n := st.refused.Load() - before; n > 3 {
					t.Errorf("%d Store calls refused for the long key during 5 requests to c.test, want at most 3 (it is dropped from the list)", n)
				}
				other := &polite.Budget{Store: st} // another process sharing the Store
				s, _ := other.Inspect("a.test", time.Now())
				if !s.PauseUntil.After(time.Now()) {
					t.Errorf("a.test's hour-long pause learned on the fallback was not carried to the Store by 5 requests it answered since: another process sees %+v", s)
				}
			})
		})
	}
}

// outageOnCarryStore is a bytesStore whose outage begins during a call for
// a.test's key while armed: the call fails after 10 ms, and every call
// after it fails until the test ends the outage.
type outageOnCarryStore struct {
	*bytesStore
	armed atomic.Bool
}

func (s *outageOnCarryStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if strings.Contains(key, "a.test") && s.armed.CompareAndSwap(true, false) {
		time.Sleep(10 * time.Millisecond) // the outage begins as the carry runs
		s.failing.Store(true)
		return errStoreDown
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// a.test's hour-long pause, learned on the fallback while the Store was
// down, waits in Budget.uncarried for a request the Store answers. Three
// short outages each begin while that carry runs: the carry is the first
// call to fail (it records no failure, by design). Counted as a.test's own
// failures (no request had found the Store failing), they dropped a.test
// from the list at the third, though the Store never refused its key: its
// pause stayed in this process, and another process sharing the Store
// sent to a.test for the hour. A failure blames a key only when another's
// carry succeeds right after it.
func TestCarryNotDroppedByOutages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &outageOnCarryStore{bytesStore: newBytesStore()}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == "c.test" {
				time.Sleep(100 * time.Millisecond) // the page: the carry fails first
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
		})
		b := &polite.Budget{Store: st}
		tr := &polite.Transport{Base: base, Budget: b, Key: func(r *http.Request) string { return r.URL.Host }}
		get := func(host string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		// The Store down: a.test refused for an hour on the fallback; its
		// carry fails while a request found the Store failing (not counted).
		st.failing.Store(true)
		get("c.test")
		get("a.test")
		time.Sleep(time.Second)
		for range 3 {
			st.failing.Store(false) // the Store is back
			time.Sleep(2 * time.Second)
			st.armed.Store(true)
			get("c.test") // answered: carries a.test, as an outage begins
			time.Sleep(time.Second)
		}
		st.failing.Store(false) // back for good
		time.Sleep(2 * time.Second)
		for range 3 {
			get("c.test") // answered by the Store: carries the list
			time.Sleep(time.Second)
		}
		other := &polite.Budget{Store: st} // another process sharing the Store
		if s, _ := other.Inspect("a.test", time.Now()); !s.PauseUntil.After(time.Now()) {
			t.Errorf("a.test's hour-long pause was never carried to the Store: three outages that began during its carry dropped it from the list, though the Store refused nothing of its own; another process sees PauseUntil %v", s.PauseUntil)
		}
	})
}
