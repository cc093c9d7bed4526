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

// earlyDeadlineStore is a bytesStore whose Wait ends at its context's
// deadline with context.DeadlineExceeded of its own, a moment before the
// context says so, as a driver's read with that deadline may.
type earlyDeadlineStore struct{ *bytesStore }

func (s earlyDeadlineStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	if d, ok := ctx.Deadline(); ok && (until.IsZero() || d.Before(until)) {
		time.Sleep(time.Until(d))
		return context.DeadlineExceeded
	}
	return s.bytesStore.Wait(ctx, key, gen, until)
}

// lateContext is a context whose deadline passes a millisecond before it
// says so (its Done and Err): the window a Store's own deadline error
// fell in.
type lateContext struct {
	context.Context
	deadline time.Time
}

func (c lateContext) Deadline() (time.Time, bool) { return c.deadline, true }

// A Store's Wait that failed with context.DeadlineExceeded at the request's
// deadline, while ctx.Err() was still nil, was taken for the Store failing:
// EventStoreDown, and a second on memory, where requests in flight in the
// Store do not count against MaxConcurrency.
func TestStoreWaitAtDeadlineIsNoStoreFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var sent atomic.Int32
		var mu sync.Mutex
		var kinds []polite.EventKind
		tr := &polite.Transport{
			Budget: &polite.Budget{Store: earlyDeadlineStore{newBytesStore()}, MaxConcurrency: 1},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if sent.Add(1) == 1 {
					<-release // the key's only slot, held
				}
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}),
			OnEvent: func(e polite.Event) {
				mu.Lock()
				kinds = append(kinds, e.Kind)
				mu.Unlock()
			},
		}
		go func() {
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}()
		synctest.Wait() // the first request holds the key's only slot
		d := time.Now().Add(time.Second)
		ctx, cancel := context.WithDeadline(context.Background(), d.Add(time.Millisecond))
		defer cancel()
		req, _ := http.NewRequestWithContext(lateContext{ctx, d}, http.MethodGet, "http://api.test/", nil)
		_, err := tr.RoundTrip(req)
		close(release)
		synctest.Wait()
		if !errors.Is(err, context.DeadlineExceeded) || sent.Load() != 1 {
			t.Errorf("RoundTrip = %v after %d sends, want the context's deadline after 1: the second went beside the first, over MaxConcurrency 1", err, sent.Load())
		}
		mu.Lock()
		defer mu.Unlock()
		for _, k := range kinds {
			if k == polite.EventStoreDown {
				t.Errorf("events %v: a wait that ended at the request's deadline was taken for the Store failing", kinds)
				break
			}
		}
	})
}

// earlyUpdateStore is a bytesStore whose Update, slow, ends at its
// context's deadline with context.DeadlineExceeded of its own, a moment
// before the context says so: what earlyDeadlineStore's Wait does, for
// the other call a request makes with its own context (Budget.acquireExt).
// Only a call with the request's deadline is slow: a release's Update
// has a deadline of its own.
type earlyUpdateStore struct {
	*bytesStore
	deadline *time.Time
}

func (s earlyUpdateStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if d, ok := ctx.Deadline(); ok && d.Equal(*s.deadline) {
		time.Sleep(time.Until(d))
		return context.DeadlineExceeded
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// A Store's Wait that ends with DeadlineExceeded at the request's
// deadline is the request's end. The Update that asks for the grant
// (Budget.acquireExt) runs with the same context, and was read as the
// Store failing: EventStoreDown, a second on memory for every request,
// and this request granted by the fallback, beside the one the Store
// holds with MaxConcurrency 1.
func TestStoreUpdateAtDeadlineIsNoStoreFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var d time.Time // the second request's deadline
		var sent atomic.Int32
		var mu sync.Mutex
		var kinds []polite.EventKind
		tr := &polite.Transport{
			Budget: &polite.Budget{Store: earlyUpdateStore{newBytesStore(), &d}, MaxConcurrency: 1},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if sent.Add(1) == 1 {
					<-release // the key's only slot, held
				}
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}),
			OnEvent: func(e polite.Event) {
				mu.Lock()
				kinds = append(kinds, e.Kind)
				mu.Unlock()
			},
		}
		go func() {
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}()
		synctest.Wait() // the first request holds the key's only slot
		d = time.Now().Add(time.Second)
		ctx, cancel := context.WithDeadline(context.Background(), d.Add(time.Millisecond))
		defer cancel()
		req, _ := http.NewRequestWithContext(lateContext{ctx, d}, http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		close(release)
		synctest.Wait()
		if !errors.Is(err, context.DeadlineExceeded) || sent.Load() != 1 {
			t.Errorf("RoundTrip = %v after %d sends, want the context's deadline after 1: the second went beside the first, over MaxConcurrency 1", err, sent.Load())
		}
		mu.Lock()
		defer mu.Unlock()
		for _, k := range kinds {
			if k == polite.EventStoreDown {
				t.Errorf("events %v: an Update that ended at the request's deadline was taken for the Store failing", kinds)
				break
			}
		}
	})
}

// Budget.wait, on a Store's DeadlineExceeded with ctx's deadline passed,
// blocked on <-ctx.Done() with no bound. A context whose Deadline has
// passed but whose Done closes much later (here an hour; never, for one
// that reports a deadline over context.Background) kept RoundTrip blocked
// past the deadline it reports. (net/http itself ends such a request at
// its deadline: the dial takes ctx.Deadline().)
func TestStoreWaitAtDeadlineDoesNotHangOnDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var sent atomic.Int32
		tr := &polite.Transport{
			Budget: &polite.Budget{Store: earlyDeadlineStore{newBytesStore()}, MaxConcurrency: 1},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if sent.Add(1) == 1 {
					<-release
				}
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}),
		}
		go func() {
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}()
		synctest.Wait()
		d := time.Now().Add(time.Second)
		ctx, cancel := context.WithDeadline(context.Background(), d.Add(time.Hour))
		defer cancel()
		var done atomic.Bool
		returned := make(chan struct{})
		go func() {
			defer close(returned)
			req, _ := http.NewRequestWithContext(lateContext{ctx, d}, http.MethodGet, "http://api.test/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
			done.Store(true)
		}()
		time.Sleep(time.Until(d) + time.Second)
		synctest.Wait()
		if !done.Load() {
			t.Errorf("RoundTrip still blocked a second past the deadline its context reports (Budget.wait on <-ctx.Done())")
		}
		cancel()
		close(release)
		<-returned
	})
}
