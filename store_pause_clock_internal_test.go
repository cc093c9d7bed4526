package polite

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// failableStore is a Store other than a MemoryStore (so that the Budget
// has a fallback), which can be made to fail.
type failableStore struct {
	m       MemoryStore
	failing atomic.Bool
}

func (s *failableStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	if s.failing.Load() {
		return context.DeadlineExceeded
	}
	return s.m.Update(ctx, key, fn)
}

func (s *failableStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.m.Wait(ctx, key, gen, until)
}

// A pause copied into the fallback (when the Store holds a request, or
// after a release) landed on an entry no Acquire had used, so the
// fallback's clock-back bound never ran on it: after a step back of two
// days with the Store failing, a Retry-After: 30 held the key 48h and
// 30s, beyond MaxPause, which the Store's path (Bound) keeps to. A pause
// uses the state at its instant now.
func TestCopiedPauseAfterClockStepBack(t *testing.T) {
	b, st, k, t0 := pausedInStore(t)
	var g lease
	if _, ok, _, _ := b.acquire(t.Context(), k, t0.Add(time.Second), control.Ask{}, &g); ok {
		t.Fatal("granted inside the Store's pause")
	}
	st.failing.Store(true)
	back := t0.Add(-48 * time.Hour)
	g = lease{}
	h, ok, _, _ := b.acquire(t.Context(), k, back, control.Ask{}, &g)
	if !ok && h.Until().Sub(back) > control.MaxPause {
		t.Errorf("Store failing, clock stepped back 48h: the fallback holds the key %v (until %v), beyond MaxPause %v", h.Until().Sub(back), h.Until(), control.MaxPause)
	}
}

// pausedInStore returns a Budget over a failableStore, and an origin's key
// the Store pauses for 30 s from t0, now.
func pausedInStore(t *testing.T) (b *Budget, st *failableStore, k budgetKey, t0 time.Time) {
	t.Helper()
	st = &failableStore{}
	b = &Budget{Store: st}
	b.init()
	k = originKey("http", "api.test")
	t0 = time.Now()
	if err := st.Update(t.Context(), k.m.String(), func(s *KeyState) {
		s.c.PauseUntil(t0, &b.cfg, t0.Add(30*time.Second), control.ReasonRetryAfter)
	}); err != nil {
		t.Fatal(err)
	}
	return b, st, k, t0
}
