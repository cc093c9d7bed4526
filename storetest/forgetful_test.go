package storetest_test

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/storetest"
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

// The suite, run on the broken store in a child process, fails: it passed
// before, no check letting a second pass between writes of one key.
func TestSuiteCatchesForgettingBeforeExpiry(t *testing.T) {
	if os.Getenv("STORETEST_CHILD") == "1" {
		storetest.TestStore(t, func(*testing.T) polite.Store { return &forgetful{last: map[string]time.Time{}} })
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSuiteCatchesForgettingBeforeExpiry$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STORETEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Errorf("storetest.TestStore passes a store that forgets states 300ms after their last update, long before their Expiry:\n%s", out)
	}
}
