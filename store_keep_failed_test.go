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

// flakyStore is a MemoryStore whose next fail Updates fail.
type flakyStore struct {
	*polite.MemoryStore
	fail atomic.Int32
}

func (s *flakyStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.fail.Load() > 0 {
		s.fail.Add(-1)
		return errors.New("store down")
	}
	return s.MemoryStore.Update(ctx, key, fn)
}

// A streamed response's headers-release (Outcome.Keep) fails on the
// Store once; the Store answers again by the time the body is closed, and
// the End it is sent succeeds. The request has ended ("a request in
// flight holds a lease until it ends", DESIGN.md §4; Budget.Lease), yet
// the Store still counted it: End removed only a lease marked kept, and
// the failed Release never marked it, so Budget.MaxConcurrency stayed
// taken for the whole Lease (10 min) and the next request failed with a
// *WaitError instead of going at once.
func TestStreamEndAfterFailedReleaseFreesStoreSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		st := &flakyStore{MemoryStore: &polite.MemoryStore{}}
		stuck := polite.NewStuckBody()
		tr := &polite.Transport{Budget: &polite.Budget{Store: st, MaxConcurrency: 1}, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if n.Add(1) == 1 {
				st.fail.Store(1) // the release at A's headers fails
				return &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Header: http.Header{}, Body: stuck, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		get := func() (*http.Response, error) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.test/", nil)
			return tr.RoundTrip(req)
		}
		respA, err := get()
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // past storeRetry: the Store is asked again
		respA.Body.Close()          // A ends; the Store answers its End
		if s, ok := tr.Inspect("http://a.test", time.Now()); ok && s.InFlight != 0 {
			t.Errorf("after A's body was closed (Store up): InFlight = %d, want 0", s.InFlight)
		}
		start := time.Now()
		resp, err := get()
		if err != nil {
			t.Fatalf("B, with nothing in flight: %v (after %v)", err, time.Since(start))
		}
		resp.Body.Close()
		if d := time.Since(start); d > 0 {
			t.Errorf("B waited %v for a slot nobody holds, want 0", d)
		}
	})
}
