package storetest_test

import (
	"context"
	"sync"
	"time"

	"github.com/politehttp/polite"
)

// forgetful is a MemoryStore that forgets a key's state 300ms after its
// last Update, whatever the state's Expiry (minutes or hours later): it
// breaks KeyState.Expiry ("when a Store may forget s") and Store.Update
// (fn gets a zero state only if the store has none, "or has forgotten it
// after its Expiry").
type forgetful struct {
	polite.MemoryStore
	mu   sync.Mutex
	last map[string]time.Time
}

func (f *forgetful) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	f.mu.Lock()
	old := !f.last[key].IsZero() && time.Since(f.last[key]) > 300*time.Millisecond
	f.last[key] = time.Now()
	f.mu.Unlock()
	return f.MemoryStore.Update(ctx, key, func(ks *polite.KeyState) {
		if old && time.Now().Before(ks.Expiry()) {
			*ks = polite.KeyState{} // forgotten before its Expiry
		}
		fn(ks)
	})
}

// self returns f: every client the suites ask for is the one store.
func (f *forgetful) self() polite.Store { return f }
