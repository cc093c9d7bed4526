package polite

import (
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// stepBackViewVsAcquire grants one request at t0 under MaxRate 1, then, at
// t0 stepped back by back, compares when Inspect says the key accepts a
// request (what RetryAt reads) with how long an acquire actually holds it.
func stepBackViewVsAcquire(t *testing.T, b *Budget, back time.Duration) {
	t.Helper()
	b.init()
	k := originKey("http", "api.test")
	t0 := time.Now().Round(0) // a MemoryStore behind the Store interface judges expiry by time.Now()
	var g lease
	if _, ok, _, _ := b.acquire(t.Context(), k, t0, control.Ask{}, &g); !ok {
		t.Fatal("first request held")
	}
	b.release(t.Context(), k, &g, t0.Add(50*time.Millisecond), &control.Outcome{First: true, Bytes: -1, Served: true})
	now := t0.Add(100 * time.Millisecond).Add(-back)
	st, ok := b.Inspect("http://api.test", now)
	if !ok {
		t.Fatal("no state inspected")
	}
	shown := st.acceptsAt(now).Sub(now)
	var g2 lease
	h, ok, _, _ := b.acquire(t.Context(), k, now, control.Ask{}, &g2)
	held := time.Duration(0)
	if !ok {
		held = h.Until().Sub(now)
	}
	if d := shown - held; d > 100*time.Millisecond || d < -100*time.Millisecond {
		t.Errorf("clock stepped back %v: Inspect/RetryAt say the key accepts a request in %v, but the next request is held %v", back, shown, held)
	}
}

// Through a Store, after a step back beyond skewMax, Inspect and RetryAt
// say what the next request finds: MaxRate's next start one spacing away.
// The view kept it a spacing and skewMax away, as a state another process
// ahead wrote, and said 11 s where the request waited 1 s.
func TestStoreStepBackBeyondSkewInspect(t *testing.T) {
	stepBackViewVsAcquire(t, &Budget{Store: sharedStore{&MemoryStore{}}, MaxRate: 1}, 60*time.Second)
}

// With no Store, after a step back of the clock, Inspect and RetryAt read
// the state as the next request bounds it: one spacing, where they showed
// the next start as the step left it, 5.9 s for a request held 1 s.
func TestMemoryStepBackInspect(t *testing.T) {
	stepBackViewVsAcquire(t, &Budget{MaxRate: 1}, 5*time.Second)
}

// Through a Store, within skewMax, the view and the request agree too.
func TestStoreStepBackWithinSkewInspect(t *testing.T) {
	stepBackViewVsAcquire(t, &Budget{Store: sharedStore{&MemoryStore{}}, MaxRate: 1}, 5*time.Second)
}
