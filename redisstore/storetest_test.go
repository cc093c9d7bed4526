package redisstore

import (
	"testing"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/storetest"
)

// The store passes the conformance suite every polite.Store must pass.
func TestConformance(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	storetest.TestStore(t, func(t *testing.T) polite.Store {
		return newStore(t, rdb, prefix)
	})
}

// Two Stores on two clients of one Redis, under one prefix, are one store
// shared by two processes.
func TestConformanceShared(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	storetest.TestSharedStore(t, func(t *testing.T) (polite.Store, polite.Store) {
		return newStore(t, newClient(t, addr), prefix), newStore(t, newClient(t, addr), prefix)
	})
}
