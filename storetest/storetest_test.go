package storetest_test

import (
	"testing"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.TestStore(t, func(*testing.T) polite.Store { return &polite.MemoryStore{} })
}

func TestMemoryStoreSharded(t *testing.T) {
	storetest.TestStore(t, func(*testing.T) polite.Store { return &polite.MemoryStore{MaxKeys: 1 << 20} })
}

// A MemoryStore is shared by the goroutines of one process: two handles on
// one are one store.
func TestMemoryStoreShared(t *testing.T) {
	storetest.TestSharedStore(t, func(*testing.T) (polite.Store, polite.Store) {
		m := &polite.MemoryStore{}
		return m, m
	})
}
