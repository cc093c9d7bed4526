package redisstore

import (
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// What a request costs a Store in Redis: the update that starts it and
// the one that ends it, one at a time, on a key no other process writes.
// The release's swap carries its number (see Store.resend), which the key
// keeps; compare with benchstat against the commit before that:
//
//	POLITE_REDIS_ADDR=127.0.0.1:6390 go test -run '^$' -bench AcquireRelease -count 6
func BenchmarkAcquireRelease(b *testing.B) {
	s := newStore(b, newClient(b, redisAddr(b)), testPrefix(b))
	cfg := &control.Config{Lease: time.Minute}
	b.ReportAllocs()
	for b.Loop() {
		var l control.Lease
		if err := s.Update(b.Context(), "k", func(ks *polite.KeyState) {
			edit(b, ks, func(c *control.State) { c.Acquire(time.Now(), cfg, control.Ask{}, &l) })
		}); err != nil {
			b.Fatal(err)
		}
		if err := s.Update(b.Context(), "k", func(ks *polite.KeyState) {
			edit(b, ks, func(c *control.State) { c.Release(time.Now(), cfg, &l, &control.Outcome{Bytes: -1}) })
		}); err != nil {
			b.Fatal(err)
		}
	}
}
