package storetest_test

import (
	"context"
	"sync"
	"time"

	"github.com/politehttp/polite"
)

// lateAfterUpdate is a conforming store but for one thing: the first Wait
// on a key after this client's Update of it returns two seconds past its
// deadline (a Wait that must first fetch the generation the write left, or
// a subscription set up on a write, whose first blocking pop rounds its
// timeout up to whole seconds); a Wait after that, with no Update between,
// is on time. A Budget waits only after an Update (the acquire that held
// the request), so every paced request starts two seconds late.
type lateAfterUpdate struct {
	polite.Store
	mu    sync.Mutex
	fresh map[string]bool
}

func (s *lateAfterUpdate) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	s.mu.Lock()
	s.fresh[key] = true
	s.mu.Unlock()
	return s.Store.Update(ctx, key, fn)
}

func (s *lateAfterUpdate) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	s.mu.Lock()
	late := s.fresh[key] && !until.IsZero()
	delete(s.fresh, key)
	s.mu.Unlock()
	if late {
		until = until.Add(2 * time.Second)
	}
	return s.Store.Wait(ctx, key, gen, until)
}

// lateAfterUpdateClients returns a function returning clients of one
// remote store, each late on the first Wait after its own Update.
func lateAfterUpdateClients() func() polite.Store {
	r := &remote{}
	return func() polite.Store { return &lateAfterUpdate{Store: r.client(), fresh: map[string]bool{}} }
}
