package polite_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// wrappedStore is a Store that is a MemoryStore behind another type (an
// instrumenting wrapper, say): the Budget reaches it through Update.
type wrappedStore struct{ polite.Store }

// With a Store, Inspect reads the stored state with an Update that changes
// nothing. On a full MemoryStore, that Update of a key with no state made
// an entry, which evicted the least recently used live key, then deleted
// the new one as zero: inspecting a key nobody used forgot one in use (a
// paused origin its pause). Forget's Update of a key with no state did the
// same.
func TestInspectUnknownKeyEvictsNone(t *testing.T) {
	const maxKeys = 4
	ms := &polite.MemoryStore{MaxKeys: maxKeys}
	b := &polite.Budget{Store: wrappedStore{ms}}
	tr := &polite.Transport{Base: roundTripFunc(draft11), Budget: b}
	visit(t, tr, 0, maxKeys) // o0 … o3, each stating a policy
	for i := range maxKeys {
		if _, ok := b.Inspect(fmt.Sprintf("http://o%d.test", i), time.Now()); !ok {
			t.Fatalf("o%d not kept before the probe", i)
		}
	}
	// Read-only looks at keys that have no state.
	for i := range maxKeys {
		if _, ok := b.Inspect(fmt.Sprintf("http://nobody%d.test", i), time.Now()); ok {
			t.Fatalf("nobody%d found", i)
		}
	}
	lost := 0
	for i := range maxKeys {
		if _, ok := b.Inspect(fmt.Sprintf("http://o%d.test", i), time.Now()); !ok {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d live keys forgotten by Inspect of keys with no state (an Update that changes nothing)", lost, maxKeys)
	}
}
