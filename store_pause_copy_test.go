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
	"github.com/politehttp/polite/ratelimittest"
)

// conflictStore is a bytesStore that, once armed, runs the next Update's
// fn first on an older copy of the key's state and only then on the
// current one, as a Store that retries on conflict does (redisstore's
// swap loop, first on its cached state): Store says fn "acts on nothing
// but its argument".
type conflictStore struct {
	*bytesStore
	mu    sync.Mutex
	stale map[string][]byte
}

func (s *conflictStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	s.mu.Lock()
	old, ok := s.stale[key]
	delete(s.stale, key)
	s.mu.Unlock()
	if ok && !s.failing.Load() {
		var ks polite.KeyState
		if err := ks.UnmarshalBinary(old); err == nil {
			fn(&ks) // the try that lost the race: discarded
		}
	}
	return s.bytesStore.Update(ctx, key, fn)
}

func (s *conflictStore) snapshot(key string) []byte {
	s.bytesStore.mu.Lock()
	defer s.bytesStore.mu.Unlock()
	return append([]byte(nil), s.bytesStore.states[key]...)
}

// twoProcesses returns two clients, each with a Budget of its own on st,
// as two processes sharing it, of one server that refuses its first
// request with Retry-After: 30; the first client's Budget; and the count
// of requests the server was sent.
func twoProcesses(st polite.Store) (a, b *http.Client, aBudget *polite.Budget, sent *atomic.Int32) {
	sent = new(atomic.Int32)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sent.Add(1) == 1 {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	base := &ratelimittest.Transport{Handler: h}
	aBudget = &polite.Budget{Store: st}
	a = &http.Client{Transport: &polite.Transport{Base: base, Budget: aBudget, MaxAttempts: 1}}
	b = &http.Client{Transport: &polite.Transport{Base: base, Budget: &polite.Budget{Store: st}, MaxAttempts: 1}}
	return a, b, aBudget, sent
}

// The Store's pause, recorded by the Update's function when it held the
// request, was not reset when the Store ran the function again and it
// granted: a first try on a state still paused (then cleared by another
// process's Forget) left the pause copied into the fallback, and when the
// Store failed next the request was held by a pause no state held.
func TestHeldPauseNotCopiedFromDiscardedTry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &conflictStore{bytesStore: newBytesStore(), stale: map[string][]byte{}}
		a, b, aBudget, n := twoProcesses(st)
		if code, _ := get(t, a, "http://api.test/"); code != http.StatusTooManyRequests {
			t.Fatalf("first request: %d, want the 429", code)
		}
		paused := st.snapshot("http://api.test")
		aBudget.Forget("http://api.test") // process A clears the key
		st.mu.Lock()
		st.stale["http://api.test"] = paused // B's next Update first tries on the paused copy
		st.mu.Unlock()
		if code, _ := get(t, b, "http://api.test/"); code != http.StatusOK {
			t.Fatalf("B after A's Forget: %d, want 200 (the Store granted it)", code)
		}
		st.failing.Store(true)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		resp, err := b.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if err != nil || n.Load() != 3 {
			t.Errorf("Store failing after it granted B with no pause: %v, %d sent; want sent (3): the fallback holds a pause copied from a discarded try of the Update", err, n.Load())
		}
	})
}

// A pause another process learned, which held this process's request
// through the Store, was not kept in this process's fallback: when the
// Store failed next, the fallback knew no pause and the request was sent
// 2 s into a Retry-After: 30. It is kept there as a release keeps its
// own.
func TestPauseFromOtherProcessSurvivesStoreOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newBytesStore()
		a, b, _, n := twoProcesses(st)
		if code, _ := get(t, a, "http://api.test/"); code != http.StatusTooManyRequests {
			t.Fatalf("first request: %d, want the 429", code)
		}
		try := func() error {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			resp, err := b.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		if err := try(); !errors.Is(err, polite.ErrWaitTooLong) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the other process's request through the Store: %v, want held by the pause", err)
		}
		st.failing.Store(true)
		if err := try(); err == nil || n.Load() != 1 {
			t.Errorf("with the Store failing, 2s into a Retry-After: 30 another process learned: %v, %d requests sent; want it held, 1 sent", err, n.Load())
		}
	})
}
