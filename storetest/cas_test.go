package storetest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/storetest"
)

var errCASContention = errors.New("casStore: too much contention on one key")

// casStore keeps states as bytes with a version, and updates them by
// compare-and-swap as a store in another process would (Redis WATCH/MULTI,
// a conditional put in DynamoDB): read, fn, swap if the version is
// unchanged, else run fn again on the fresh state; after 3 lost swaps it
// gives up with an error, as redisstore does with ErrContention ("An error
// means the state may not have been kept"). It never keeps a state fn did
// not leave, never loses an Update that returned nil, and wakes the
// waiters whenever Generation grows.
type casStore struct {
	mu      sync.Mutex
	vals    map[string][]byte
	vers    map[string]uint64
	changed map[string]chan struct{}
}

func newCASStore() *casStore {
	return &casStore{vals: map[string][]byte{}, vers: map[string]uint64{}, changed: map[string]chan struct{}{}}
}

func (s *casStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	for range 3 {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.mu.Lock()
		b, ver := s.vals[key], s.vers[key]
		s.mu.Unlock()
		var ks polite.KeyState
		if err := ks.UnmarshalBinary(b); err != nil {
			return err
		}
		old := ks.Generation()
		fn(&ks)
		nb, err := ks.MarshalBinary()
		if err != nil {
			return err
		}
		time.Sleep(200 * time.Microsecond) // the round trip of the swap
		s.mu.Lock()
		if s.vers[key] != ver {
			s.mu.Unlock()
			continue // lost the swap: again on the fresh state
		}
		s.vals[key], s.vers[key] = nb, ver+1
		if ks.Generation() > old {
			if ch := s.changed[key]; ch != nil {
				close(ch)
				delete(s.changed, key)
			}
		}
		s.mu.Unlock()
		return nil
	}
	return errCASContention
}

func (s *casStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	var fire <-chan time.Time
	if !until.IsZero() {
		d := time.Until(until)
		if d <= 0 {
			return nil
		}
		t := time.NewTimer(d)
		defer t.Stop()
		fire = t.C
	}
	for {
		s.mu.Lock()
		var ks polite.KeyState
		ks.UnmarshalBinary(s.vals[key])
		if ks.Generation() > gen {
			s.mu.Unlock()
			return nil
		}
		ch := s.changed[key]
		if ch == nil {
			ch = make(chan struct{})
			s.changed[key] = ch
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-fire:
			return nil
		case <-ch:
		}
	}
}

// A store that gives up an Update under contention, with an error, keeps
// the Store contract: the suite failed it for the error itself, though no
// update that returned nil was lost.
func TestContendedCASConforms(t *testing.T) {
	storetest.TestStore(t, func(*testing.T) polite.Store { return newCASStore() })
}
