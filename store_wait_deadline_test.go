package polite_test

import (
	"context"
	"errors"
	"net/http"
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
		h := newHeldKey(earlyDeadlineStore{newBytesStore()})
		d := time.Now().Add(time.Second)
		ctx, cancel := context.WithDeadline(context.Background(), d.Add(time.Millisecond))
		defer cancel()
		h.check(t, h.get(ctx, d), "a wait")
	})
}

// heldKey is a Transport over a Store, with Budget.MaxConcurrency 1,
// whose first request to api.test holds the key's only slot until the
// check of a second.
type heldKey struct {
	tr      *polite.Transport
	sent    atomic.Int32
	downs   atomic.Int32 // EventStoreDown reported
	release chan struct{}
}

// newHeldKey returns a heldKey over store, its first request in flight.
func newHeldKey(store polite.Store) *heldKey {
	h := &heldKey{release: make(chan struct{})}
	h.tr = &polite.Transport{
		Budget: &polite.Budget{Store: store, MaxConcurrency: 1},
		Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if h.sent.Add(1) == 1 {
				<-h.release // the key's only slot, held
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}),
		OnEvent: func(e polite.Event) {
			if e.Kind == polite.EventStoreDown {
				h.downs.Add(1)
			}
		},
	}
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
		if resp, err := h.tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}()
	synctest.Wait()
	return h
}

// get sends a GET of api.test through h with ctx, which reports the
// deadline d.
func (h *heldKey) get(ctx context.Context, d time.Time) error {
	req, _ := http.NewRequestWithContext(lateContext{ctx, d}, http.MethodGet, "http://api.test/", nil)
	resp, err := h.tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// check ends the first request, and checks that the second, which ended
// with err, was ended by its deadline, not sent beside the first, and that
// what of the Store's ended at the deadline (what) was not taken for the
// Store failing.
func (h *heldKey) check(t *testing.T, err error, what string) {
	t.Helper()
	close(h.release)
	synctest.Wait()
	if !errors.Is(err, context.DeadlineExceeded) || h.sent.Load() != 1 {
		t.Errorf("RoundTrip = %v after %d sends, want the context's deadline after 1: the second went beside the first, over MaxConcurrency 1", err, h.sent.Load())
	}
	if n := h.downs.Load(); n != 0 {
		t.Errorf("%d EventStoreDown: %s that ended at the request's deadline was taken for the Store failing", n, what)
	}
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
		var d time.Time // the second request's deadline
		h := newHeldKey(earlyUpdateStore{newBytesStore(), &d})
		d = time.Now().Add(time.Second)
		ctx, cancel := context.WithDeadline(context.Background(), d.Add(time.Millisecond))
		defer cancel()
		h.check(t, h.get(ctx, d), "an Update")
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
		h := newHeldKey(earlyDeadlineStore{newBytesStore()})
		d := time.Now().Add(time.Second)
		ctx, cancel := context.WithDeadline(context.Background(), d.Add(time.Hour))
		defer cancel()
		var done atomic.Bool
		returned := make(chan struct{})
		go func() {
			defer close(returned)
			h.get(ctx, d)
			done.Store(true)
		}()
		time.Sleep(time.Until(d) + time.Second)
		synctest.Wait()
		if !done.Load() {
			t.Errorf("RoundTrip still blocked a second past the deadline its context reports (Budget.wait on <-ctx.Done())")
		}
		cancel()
		close(h.release)
		<-returned
	})
}
