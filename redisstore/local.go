package redisstore

import (
	"context"
	"sync"
	"time"

	"github.com/politehttp/polite"
)

// memStore keeps budgets in this process's memory while Redis does not
// answer: requests keep being paced, by what this process sees.
type memStore struct {
	mu  sync.Mutex
	m   map[string]*memEntry
	max int
}

type memEntry struct {
	st      polite.KeyState
	changed chan struct{} // closed when the generation changes; nil when nobody waits
}

func (ms *memStore) init(max int) {
	ms.m = make(map[string]*memEntry)
	ms.max = max
}

func (ms *memStore) update(ctx context.Context, id string, fn func(*polite.KeyState)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	e, ok := ms.m[id]
	if !ok {
		ms.makeRoom()
		e = &memEntry{}
		ms.m[id] = e
	}
	before := e.st.Generation()
	fn(&e.st)
	if e.st.Generation() != before && e.changed != nil {
		close(e.changed)
		e.changed = nil
	}
	return nil
}

// makeRoom forgets expired states, or any one nobody waits on, when the
// store is full. ms.mu must be held.
func (ms *memStore) makeRoom() {
	if len(ms.m) < ms.max {
		return
	}
	now := time.Now()
	for k, e := range ms.m {
		if exp := e.st.Expiry(); e.changed == nil && !exp.IsZero() && now.After(exp) {
			delete(ms.m, k)
		}
	}
	for k, e := range ms.m {
		if len(ms.m) < ms.max {
			return
		}
		if e.changed == nil {
			delete(ms.m, k)
		}
	}
}

// wait is Store.Wait in memory; it also returns when wake is closed.
func (ms *memStore) wait(ctx context.Context, id string, gen uint64, until time.Time, wake <-chan struct{}) error {
	ms.mu.Lock()
	e, ok := ms.m[id]
	if !ok || e.st.Generation() != gen {
		ms.mu.Unlock()
		return nil
	}
	if e.changed == nil {
		e.changed = make(chan struct{})
	}
	changed := e.changed
	ms.mu.Unlock()

	var deadline <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-changed:
		return nil
	case <-wake:
		return nil
	case <-deadline:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reset wakes every waiter and forgets every state: Redis is used again.
func (ms *memStore) reset() {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for k, e := range ms.m {
		if e.changed != nil {
			close(e.changed)
		}
		delete(ms.m, k)
	}
}
