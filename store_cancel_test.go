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

// rpcError is how an RPC client reports a call whose context ended: a
// status error naming the context's end, which does not wrap
// context.Canceled or context.DeadlineExceeded (gRPC's
// "rpc error: code = Canceled desc = context canceled"; lib/pq's
// "pq: canceling statement due to user request" is another such).
type rpcError struct{ desc string }

func (e rpcError) Error() string { return "rpc error: code = Canceled desc = " + e.desc }

// rpcStore is a healthy store behind an RPC: each Update takes latency
// (a round trip), and the client gives up when the caller's context ends,
// with its own error.
type rpcStore struct {
	*bytesStore
	latency time.Duration
}

func (s *rpcStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if err := ctx.Err(); err != nil {
		return rpcError{err.Error()}
	}
	if s.latency > 0 {
		t := time.NewTimer(s.latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return rpcError{ctx.Err().Error()}
		}
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// causeStore is rpcStore, but its client reports a call whose context
// ended with context.Cause(ctx), the Go 1.20 idiom (the Transport's own
// causeOf does the same): a context cancelled with a cause (errgroup's,
// whose first error cancels the others) gives an error that wraps neither
// context.Canceled nor context.DeadlineExceeded.
type causeStore struct {
	*bytesStore
	latency time.Duration
}

func (s *causeStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if s.latency > 0 {
		t := time.NewTimer(s.latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// A healthy Store (such a one passes storetest) whose client reports the
// end of a request's context in its own words: one request cancelled
// while its Update was in flight (a user who navigated away, a hedged
// request's loser, errgroup cancelling its other fetches), or whose
// deadline the Store answered at, was read as the Store failing (its
// error does not wrap ctx.Err()): EventStoreDown, and every key of the
// process paced on memory alone, unshared, for a second.
func TestEndedRequestKeepsStoreUp(t *testing.T) {
	stores := []struct {
		name string
		new  func(latency time.Duration) interface {
			polite.Store
			count() int64
		}
		ctx func(parent context.Context) (context.Context, func())
	}{
		{"rpc-status-error", func(l time.Duration) interface {
			polite.Store
			count() int64
		} {
			return &rpcStore{bytesStore: newBytesStore(), latency: l}
		}, func(p context.Context) (context.Context, func()) {
			ctx, cancel := context.WithCancel(p)
			return ctx, func() { cancel() }
		}},
		{"context-cause", func(l time.Duration) interface {
			polite.Store
			count() int64
		} {
			return &causeStore{bytesStore: newBytesStore(), latency: l}
		}, func(p context.Context) (context.Context, func()) {
			ctx, cancel := context.WithCancelCause(p) // as errgroup.WithContext
			return ctx, func() { cancel(errors.New("another fetch of the group failed")) }
		}},
		{"rpc-deadline", func(l time.Duration) interface {
			polite.Store
			count() int64
		} {
			return &rpcStore{bytesStore: newBytesStore(), latency: l}
		}, func(p context.Context) (context.Context, func()) {
			ctx, cancel := context.WithTimeout(p, 5*time.Millisecond) // ends it, answered at once
			return ctx, func() { time.AfterFunc(time.Second, cancel) }
		}},
	}
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := sc.new(20 * time.Millisecond)
				var down atomic.Int32
				tr := &polite.Transport{Base: okRT{}, Budget: &polite.Budget{Store: st}, OnEvent: func(e polite.Event) {
					if e.Kind == polite.EventStoreDown {
						down.Add(1)
					}
				}}
				get := func(ctx context.Context, url string) error {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
					resp, err := tr.RoundTrip(req)
					if err == nil {
						resp.Body.Close()
					}
					return err
				}
				if err := get(t.Context(), "http://a.test/"); err != nil {
					t.Fatal(err)
				}
				// A request that ends 5 ms into its Update.
				ctx, cancel := sc.ctx(t.Context())
				time.AfterFunc(5*time.Millisecond, cancel)
				err := get(ctx, "http://b.test/")
				t.Logf("cancelled request: %v", err)
				// The next request, to another origin, 100 ms later.
				time.Sleep(100 * time.Millisecond)
				before := st.count()
				if err := get(t.Context(), "http://a.test/"); err != nil {
					t.Fatal(err)
				}
				used := st.count() - before
				if down.Load() != 0 || used == 0 {
					t.Errorf("one request cancelled during its Update of a healthy Store: %d EventStoreDown, and the next request, of another origin, made %d Updates of the Store (paced by the fallback alone); want 0 EventStoreDown and the Store used", down.Load(), used)
				}
			})
		})
	}
}

func (s *rpcStore) count() int64   { return s.updates.Load() }
func (s *causeStore) count() int64 { return s.updates.Load() }

// okRT answers 200 at once.
type okRT struct{}

func (okRT) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}
