package polite

import (
	"context"
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// oneStateStore keeps one KeyState and runs fn on it: an Update that
// allocates nothing of its own.
type oneStateStore struct{ ks KeyState }

func (s *oneStateStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	fn(&s.ks)
	return nil
}

func (s *oneStateStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return nil
}

// TestStoreAcquireAllocs: an acquire on a Store (here held by a pause)
// allocates the closure its Update runs, the key's name, and one variable
// for all the closure reads and writes: each variable it captured was
// moved to the heap (9 allocations; 11 once it read the quota a hold for
// good exceeds too).
func TestStoreAcquireAllocs(t *testing.T) {
	st := &oneStateStore{}
	b := &Budget{Store: st}
	b.init()
	now := time.Now()
	st.ks.c.PauseUntil(now, &b.cfg, now.Add(time.Hour), control.ReasonRetryAfter)
	k := originKey("https", "api.example")
	ctx := context.Background()
	var g lease
	n := testing.AllocsPerRun(100, func() {
		g = lease{}
		if _, ok, _, err := b.acquire(ctx, k, now, control.Ask{}, &g); ok || err != nil {
			t.Fatalf("granted %v, err %v; want held by the pause", ok, err)
		}
	})
	if n > 3 {
		t.Errorf("a held acquire on a Store: %v allocations; want 3 at most", n)
	}
}
