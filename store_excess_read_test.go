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
	"github.com/politehttp/polite/ratelimittest"
)

// hangingStore is a bytesStore that, once hang is set, answers nothing:
// each Update ends at a timeout of its own (as redisstore's Timeout), or
// at ctx's end, with an error.
type hangingStore struct {
	*bytesStore
	hang  atomic.Bool
	calls atomic.Int64
}

var errStoreTimeout = errors.New("store: i/o timeout")

func (s *hangingStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.hang.Load() {
		s.calls.Add(1)
		select {
		case <-time.After(5 * time.Second):
			return errStoreTimeout
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// A priced request that MaxRate holds past MaxWait fails with a
// WaitError at once. With a Store that stopped answering, the read of the
// Store's quota for a request a ceiling holds (see Budget.excess) made
// every such request wait for the Store's own timeout first, and the
// failure was not recorded, so the next request paid it again.
func TestExcessReadSkippedForCeilingPastMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { openAIHeaders(w, "5000") })
		st := &hangingStore{bytesStore: newBytesStore()}
		tr := &polite.Transport{
			Base:    &ratelimittest.Transport{Handler: h},
			MaxRate: 1.0 / 60, // the next start a minute away
			MaxWait: time.Second,
			Budget:  &polite.Budget{Store: st},
		}
		if err := sendCost(t, tr, polite.Cost{Tokens: 100}); err != nil {
			t.Fatal(err)
		}
		st.hang.Store(true)
		for i := range 2 {
			start := time.Now()
			err := sendCost(t, tr, polite.Cost{Tokens: 100})
			d := time.Since(start)
			var we *polite.WaitError
			if !errors.As(err, &we) || d > 0 {
				t.Errorf("request %d held a minute by MaxRate, MaxWait 1s: err %v after %v (Store calls %d); want a *WaitError at once", i, err, d, st.calls.Load())
			}
		}
	})
}

// A priced request a slot holds (MaxConcurrency, its end unknown) reads
// the Store's quota until MaxWait's end at most, and a Store that does not
// answer is marked down (EventStoreDown): the request fails at MaxWait,
// not at the Store's timeout, past it.
func TestExcessReadBoundedByMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n++
			if n == 2 {
				<-block
			}
			openAIHeaders(w, "5000")
		})
		st := &hangingStore{bytesStore: newBytesStore()}
		ev := &events{}
		tr := &polite.Transport{
			Base:           &ratelimittest.Transport{Handler: h},
			MaxConcurrency: 1,
			MaxWait:        2 * time.Second, // below the Store's own timeout of 5s
			Budget:         &polite.Budget{Store: st},
			OnEvent:        ev.on,
		}
		if err := sendCost(t, tr, polite.Cost{Tokens: 100}); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { sendCost(t, tr, polite.Cost{Tokens: 100}); close(done) }()
		synctest.Wait() // in flight, its slot held, blocked in the handler
		st.hang.Store(true)
		start := time.Now()
		err := sendCost(t, tr, polite.Cost{Tokens: 100})
		d := time.Since(start)
		var we *polite.WaitError
		if !errors.As(err, &we) || d > 2*time.Second {
			t.Errorf("a priced request a slot holds, the Store not answering: err %v after %v; want a *WaitError at MaxWait (2s)", err, d)
		}
		if got := len(ev.of(polite.EventStoreDown)); got != 1 {
			t.Errorf("%d EventStoreDown, want 1: the Store did not answer", got)
		}
		close(block)
		<-done
	})
}
