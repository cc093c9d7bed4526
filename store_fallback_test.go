package polite_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// slowFailStore is a bytesStore whose Updates, while down, take delay (as a
// driver's dial timeout would) and then fail; detached, they wait out the
// delay whatever the context, as a store that finishes its call for the
// others it batched does.
type slowFailStore struct {
	*bytesStore
	down     atomic.Bool
	delay    time.Duration
	detached bool
	calls    atomic.Int64
}

func (s *slowFailStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.down.Load() {
		s.calls.Add(1)
		var done <-chan struct{}
		if !s.detached {
			done = ctx.Done()
		}
		select {
		case <-time.After(s.delay):
		case <-done:
			return ctx.Err()
		}
		return errStoreDown
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// A Store that failed slowly (each Update after 5 s) was asked again by the
// very next request, not a second later: the retry was dated from when the
// failing Update began, a time already past when it returned, and every
// request of the outage paid the Store's timeout.
func TestSlowFailingStoreTriedASecondLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
		st := &slowFailStore{bytesStore: newBytesStore(), delay: 5 * time.Second}
		st.down.Store(true)
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}}
		c := &http.Client{Transport: tr}
		var took []time.Duration
		for range 3 {
			start := time.Now()
			resp, err := c.Get("http://api.test/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			took = append(took, time.Since(start))
		}
		t.Logf("request durations %v; Store Updates tried %d", took, st.calls.Load())
		if n := st.calls.Load(); n != 1 {
			t.Errorf("the Store, down, was tried %d times by 3 back-to-back requests within 1 s of its failure, want 1 (tried again a second later)", n)
		}
		if took[1] > 0 || took[2] > 0 {
			t.Errorf("requests after the failure took %v, %v, want 0 (on the fallback)", took[1], took[2])
		}
	})
}

// A Store whose failing Updates end at a timeout of its own, after the
// request's shorter deadline: the Budget took the request's end for the
// cause, never found the Store down, and every request failed.
func TestStoreFailingPastRequestDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
		st := &slowFailStore{bytesStore: newBytesStore(), delay: 250 * time.Millisecond, detached: true}
		st.down.Store(true)
		var down atomic.Int32
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st},
			OnEvent: func(e polite.Event) {
				if e.Kind == polite.EventStoreDown {
					down.Add(1)
				}
			}}
		c := &http.Client{Transport: tr}
		failed := 0
		for range 5 {
			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			resp, err := c.Do(req)
			cancel()
			if err != nil {
				failed++
				continue
			}
			resp.Body.Close()
		}
		if failed != 1 || down.Load() != 1 {
			t.Errorf("%d of 5 requests failed, %d store-down events; want 1 and 1 (the first, then the fallback)", failed, down.Load())
		}
	})
}

// refusedOnce returns a handler that refuses its first request with a 429
// and Retry-After retryAfter, and answers every other with a bare 200.
func refusedOnce(retryAfter string) http.Handler {
	var n atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", retryAfter)
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
}

// A pause process A learned while the shared Store was down is carried into
// the Store at A's next request (DESIGN.md §3), once: carried again at
// every request after, it came back after process B's Forget cleared the
// stored state, and A's next request was held for the rest of the
// Retry-After instead of starting fresh.
func TestCarriedPauseCarriedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := refusedOnce("60")
		st := newBytesStore()
		base := &ratelimittest.Transport{Handler: h}
		a := &polite.Transport{Base: base, Budget: &polite.Budget{Store: st}, MaxAttempts: 1}
		bBudget := &polite.Budget{Store: st}
		ca := &http.Client{Transport: a}

		st.failing.Store(true)
		if code, _ := get(t, ca, "http://api.test/"); code != http.StatusTooManyRequests {
			t.Fatalf("first request: %d, want the 429", code)
		}
		st.failing.Store(false)
		time.Sleep(1100 * time.Millisecond) // the Budget tries the Store again

		// A's next request carries the pause into the Store, and is held.
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		if resp, err := ca.Do(req); err == nil {
			resp.Body.Close()
			t.Fatal("sent during the pause")
		}
		cancel()
		if s, ok := (&polite.Transport{Budget: bBudget}).Inspect("http://api.test", time.Now()); !ok || s.PauseUntil.IsZero() {
			t.Fatalf("the pause was not carried into the Store: %+v %v", s, ok)
		}

		// Process B clears the key in the Store.
		bBudget.Forget("http://api.test")
		if s, ok := (&polite.Transport{Budget: bBudget}).Inspect("http://api.test", time.Now()); ok && !s.PauseUntil.IsZero() {
			t.Fatalf("Forget left the Store paused: %+v", s)
		}

		// A's next request: the Store's state is fresh, the pause already
		// carried once; it should start at once.
		ctx, cancel = context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		start := time.Now()
		resp, err := ca.Do(req)
		if err != nil {
			t.Errorf("after B's Forget, A's request failed after %v: %v (the carried pause was put back)", time.Since(start), err)
		} else {
			resp.Body.Close()
		}
		if s, ok := (&polite.Transport{Budget: bBudget}).Inspect("http://api.test", time.Now()); ok && !s.PauseUntil.IsZero() {
			t.Errorf("after B's Forget the Store is paused again until %v", s.PauseUntil)
		}
	})
}
