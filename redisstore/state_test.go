package redisstore

import (
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// edit changes ks through the controller's own state type, as a Budget
// would.
func edit(t testing.TB, ks *polite.KeyState, f func(*control.State)) {
	t.Helper()
	b, err := ks.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var c control.State
	if err := c.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	f(&c)
	if b, err = c.MarshalBinary(); err != nil {
		t.Fatal(err)
	}
	if err := ks.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
}

// bump makes a change that waiters wait for, as the end of a request
// does: the generation grows by one.
func bump(t testing.TB, ks *polite.KeyState) {
	edit(t, ks, func(c *control.State) {
		c.Release(time.Now(), &control.Config{}, &control.Lease{}, &control.Outcome{Failed: true})
	})
}

// start starts a request at now, with a lease of lease, in a state kept
// for idle after it.
func start(t testing.TB, ks *polite.KeyState, now time.Time, idle, lease time.Duration) {
	edit(t, ks, func(c *control.State) {
		c.Acquire(now, &control.Config{IdleTTL: idle, Lease: lease}, control.Ask{}, new(control.Lease))
	})
}
