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
