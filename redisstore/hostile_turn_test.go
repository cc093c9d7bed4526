package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// A turn queue whose turn end read as NaN in Lua ("nan", which tonumber
// takes and every comparison fails) was neither past nor in the far
// future: the swap script's checks (qt > clock()+turn, qt <= clock())
// both passed it, so the turn of the queue's head never lapsed, and every
// Update of a store named behind it failed with ErrContention for as long
// as the key stayed. Store names are readable by anyone sharing the
// Redis (each write's token, "name.n", is in the key's w field).
func TestHostileNaNTurnStartsOver(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	a := newStore(t, rdb, prefix)
	ctx := t.Context()
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	rkey := a.redisKey(id("k"))
	// Store names are readable by anyone sharing the Redis: each write's
	// token ("name.n") is in the key's w field.
	if err := rdb.HSet(ctx, rkey, "q", "0123456789abcdef "+a.name, "qt", "nan").Err(); err != nil {
		t.Fatal(err)
	}
	before := a.Stats().Swaps
	start := time.Now()
	if err := a.Update(context.Background(), "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Errorf("Update of a key whose turn ends at NaN: %v after %v and %d swaps; want the queue dropped and the update kept",
			err, time.Since(start).Round(time.Millisecond), a.Stats().Swaps-before)
	}
}
