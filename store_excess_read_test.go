package polite_test

import (
	"context"
	"errors"
	"fmt"
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
// WaitError. With a Store that stopped answering, the read of the Store's
// quota for a request a ceiling holds (see Budget.excess) made every such
// request wait for the Store's own timeout first (5s), past MaxWait; it
// is bounded by MaxWait's end.
func TestExcessReadBoundedWhenCeilingPastMaxWait(t *testing.T) {
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
			if !errors.As(err, &we) || d > time.Second {
				t.Errorf("request %d held a minute by MaxRate, MaxWait 1s: err %v after %v (Store calls %d); want a *WaitError within MaxWait", i, err, d, st.calls.Load())
			}
		}
	})
}

// slotHeld returns a Transport over the Store st whose one slot
// (MaxConcurrency 1) a priced request holds, blocked in the handler after
// a first request's answer stated OpenAI's token quota; release lets it
// end and waits for it.
func slotHeld(t *testing.T, st polite.Store, maxWait time.Duration, onEvent func(polite.Event)) (tr *polite.Transport, release func()) {
	block := make(chan struct{})
	n := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		if n == 2 {
			<-block
		}
		openAIHeaders(w, "5000")
	})
	tr = &polite.Transport{
		Base:           &ratelimittest.Transport{Handler: h},
		MaxConcurrency: 1,
		MaxWait:        maxWait,
		OnEvent:        onEvent,
	}
	if st != nil {
		tr.Budget = &polite.Budget{Store: st}
	}
	if err := sendCost(t, tr, polite.Cost{Tokens: 100}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { sendCost(t, tr, polite.Cost{Tokens: 100}); close(done) }()
	synctest.Wait() // in flight, its slot held, blocked in the handler
	return tr, func() { close(block); <-done }
}

// A priced request a slot holds (MaxConcurrency, its end unknown) reads
// the Store's quota until MaxWait's end at most: the request fails at
// MaxWait, not at the Store's timeout, past it. A Store slower than
// MaxWait is not reported down for it: it did not fail.
func TestExcessReadBoundedByMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &hangingStore{bytesStore: newBytesStore()}
		ev := &events{}
		tr, release := slotHeld(t, st, 2*time.Second, ev.on) // below the Store's own timeout of 5s
		defer release()
		st.hang.Store(true)
		start := time.Now()
		err := sendCost(t, tr, polite.Cost{Tokens: 100})
		d := time.Since(start)
		var we *polite.WaitError
		if !errors.As(err, &we) || d > 2*time.Second {
			t.Errorf("a priced request a slot holds, the Store not answering: err %v after %v; want a *WaitError at MaxWait (2s)", err, d)
		}
		if got := len(ev.of(polite.EventStoreDown)); got != 0 {
			t.Errorf("%d EventStoreDown, want none: the Store answered no sooner than MaxWait's end, but did not fail", got)
		}
	})
}

// latentStore is a healthy bytesStore whose every Update takes latency, as
// a Store across a network does; it honours ctx.
type latentStore struct {
	*bytesStore
	latency time.Duration
}

func (s *latentStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	select {
	case <-time.After(s.latency):
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// A healthy Store that answers every call in 5ms, MaxWait 1ms: the
// excess read, bounded by MaxWait's end, ends there; that is not the
// Store failing (no EventStoreDown, and the Budget does not pace on
// memory for it), as the acquire beside it, bounded by the request's
// context alone, finds the Store healthy.
func TestExcessReadSlowStoreNotDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &latentStore{bytesStore: newBytesStore(), latency: 5 * time.Millisecond}
		ev := &events{}
		tr, release := slotHeld(t, st, time.Millisecond, ev.on)
		defer release()
		sendCost(t, tr, polite.Cost{Tokens: 100}) // held by the slot: a WaitError is expected
		if got := ev.of(polite.EventStoreDown); len(got) != 0 {
			t.Errorf("healthy Store (5ms a call), MaxWait 1ms: %d EventStoreDown (err %v); want none", len(got), got[0].Err)
		}
	})
}

// A request beyond a whole quota (10000 tokens, quota 6000) that MaxRate
// holds past MaxWait "fails at once, without waiting" with a CostError
// (DESIGN.md, TestCostErrorBeforeCeiling), not a WaitError, which tells
// the caller to wait for room no wait can make (as a change that skipped
// the check when the ceiling failed the request did).
func TestCostErrorBeforeCeilingPastMaxWait(t *testing.T) {
	for _, store := range []bool{false, true} {
		t.Run(fmt.Sprintf("store=%v", store), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { openAIHeaders(w, "5000") })
				tr := &polite.Transport{
					Base:    &ratelimittest.Transport{Handler: h},
					MaxRate: 1.0 / 60,
					MaxWait: time.Second,
				}
				if store {
					tr.Budget = &polite.Budget{Store: newBytesStore()}
				}
				if err := sendCost(t, tr, polite.Cost{Tokens: 100}); err != nil {
					t.Fatal(err)
				}
				err := sendCost(t, tr, polite.Cost{Tokens: 10000})
				if !errors.Is(err, polite.ErrCostExceedsQuota) {
					t.Errorf("a request beyond the whole quota, MaxRate holding it past MaxWait: err %v; want a *CostError", err)
				}
			})
		})
	}
}

// deafStore ignores ctx: once hang is set, each Update ends at a timeout
// of its own (5s) with an error that does not wrap ctx.Err(). Store's doc:
// such an error, more than 25 ms after ctx's deadline, is the Store failing.
type deafStore struct {
	*bytesStore
	hang atomic.Bool
}

func (s *deafStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.hang.Load() {
		time.Sleep(5 * time.Second)
		return errStoreTimeout
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// A Store that ignores ctx and fails at its own timeout, 3s past the
// read's bound, failed: reported down once, the next read skips it. The
// end of the bound alone counted for the read's end, and every priced
// request a ceiling held paid the Store's timeout again.
func TestExcessReadOutlastedStoreIsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &deafStore{bytesStore: newBytesStore()}
		ev := &events{}
		tr, release := slotHeld(t, st, 2*time.Second, ev.on)
		defer release()
		st.hang.Store(true)
		defer st.hang.Store(false)
		var ds []time.Duration
		for i := 0; i < 2; i++ {
			start := time.Now()
			err := sendCost(t, tr, polite.Cost{Tokens: 100})
			ds = append(ds, time.Since(start))
			var we *polite.WaitError
			if !errors.As(err, &we) {
				t.Errorf("request %d: err %v, want *WaitError", i, err)
			}
		}
		if got := len(ev.of(polite.EventStoreDown)); got != 1 || ds[1] >= 5*time.Second {
			t.Errorf("Store failing at its own 5s timeout, 3s past MaxWait's end: %d EventStoreDown, requests took %v; want 1 and the second not paying the Store's timeout again", got, ds)
		}
	})
}
