package polite_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// gatedStore is a Store over a MemoryStore that answers until
// failing is set; from then on each Update blocks until gate is closed,
// and then fails, as a Store whose connection went away does.
type gatedStore struct {
	inner   polite.MemoryStore
	failing atomic.Bool
	gate    chan struct{}
}

func (s *gatedStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.failing.Load() {
		<-s.gate
		return errors.New("store down")
	}
	return s.inner.Update(ctx, key, fn)
}

func (s *gatedStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.inner.Wait(ctx, key, gen, until)
}

// The Store's Update that tells a key a waiting request left runs in a
// goroutine of its own, after RoundTrip returned: the EventStoreDown or
// EventStoreUp it finds carries no request. It carried the caller's,
// which the caller owns again once RoundTrip returned (the RoundTripper
// contract; SECURITY.md, Event.Request), and may have reused: here its
// path was changed to /reused, and OnEvent saw it.
func TestStoreEventAfterReturnHasNoRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &gatedStore{gate: make(chan struct{})}
		var (
			mu       sync.Mutex
			returned bool
			late     []string
		)
		tr := &polite.Transport{
			Budget:      &polite.Budget{Store: st},
			MaxAttempts: 1,
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"60"}}, Body: http.NoBody, Request: r}, nil
			}),
			OnEvent: func(e polite.Event) {
				mu.Lock()
				defer mu.Unlock()
				if returned && e.Request != nil {
					late = append(late, string(e.Kind)+" "+e.Request.URL.Path)
				}
			},
		}
		// Pause the origin for a minute.
		r0, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/first", nil)
		resp, err := tr.RoundTrip(r0)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()

		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/waiting", nil)
		done := make(chan error, 1)
		go func() { _, err := tr.RoundTrip(req); done <- err }()
		time.Sleep(10 * time.Second) // it waits out the pause
		synctest.Wait()
		st.failing.Store(true)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("RoundTrip = %v, want context.Canceled", err)
		}
		mu.Lock()
		returned = true
		mu.Unlock()
		// RoundTrip returned an error: the caller may reuse its request.
		req.URL.Path = "/reused"
		close(st.gate)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, l := range late {
			t.Errorf("after RoundTrip returned, OnEvent got %s: the caller's request, read after it was handed back", l)
		}
	})
}

// heldStore is a Store over a MemoryStore whose Updates, once held is
// set, wait for gate to close and then go on; it counts them.
type heldStore struct {
	inner   polite.MemoryStore
	held    atomic.Bool
	gate    chan struct{}
	updates atomic.Int32 // Updates called while held
}

func (s *heldStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.held.Load() {
		s.updates.Add(1)
		<-s.gate
	}
	return s.inner.Update(ctx, key, fn)
}

func (s *heldStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.inner.Wait(ctx, key, gen, until)
}

// Requests that stop waiting on a Store tell it so from one goroutine,
// one Update for the leaves of a key: a Store that hung while 200
// requests gave up held 200 goroutines, one Update each, until
// releaseTimeout.
func TestLeavesToldByOneGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 200
		st := &heldStore{gate: make(chan struct{})}
		tr := &polite.Transport{
			Budget:      &polite.Budget{Store: st},
			MaxAttempts: 1,
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"60"}}, Body: http.NoBody, Request: r}, nil
			}),
		}
		// Pause the origin for a minute.
		r0, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(r0)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()

		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
				if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
					t.Errorf("RoundTrip = %v, want context.Canceled", err)
				}
			})
		}
		time.Sleep(10 * time.Second) // they wait out the pause
		synctest.Wait()
		st.held.Store(true)
		cancel()
		wg.Wait()
		synctest.Wait()
		// Each goroutine left telling the Store waits at the gate in
		// an Update. (Counted by runtime.NumGoroutine, which counts the
		// process's goroutines, those other tests left running outside
		// the bubble came in too: 32 once under -race.)
		if waiting := st.updates.Load(); waiting > 2 {
			t.Errorf("%d goroutines left telling the Store of %d requests that stopped waiting, want at most 2", waiting, n)
		}
		close(st.gate)
		synctest.Wait()
		if u := st.updates.Load(); u > 3 {
			t.Errorf("%d Updates told the Store of %d requests that left one key, want at most 3", u, n)
		}
		time.Sleep(time.Minute) // past the pause and every timeout
	})
}
