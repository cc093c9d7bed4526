package redisstore

import (
	"fmt"
	"testing"
)

// A shard keeps at most max entries besides those in use: an entry pinned
// by a long Wait at the back of the list stopped every eviction, and the
// shard grew by an entry for every new key while it waited.
func TestShardBoundedPastPinned(t *testing.T) {
	var sh shard
	sh.init(4)
	long := sh.pin("long") // a Wait for a pause
	for i := range 500 {
		sh.unpin(sh.pin(fmt.Sprint("k", i)))
		if n := len(sh.m); n > 4 {
			t.Fatalf("after %d keys, %d entries kept with max 4", i+1, n)
		}
	}
	if sh.m["long"] != long {
		t.Error("the entry in use was forgotten")
	}
	// Every entry in use: kept beyond max, then trimmed once unpinned.
	var pinned []*entry
	for i := range 8 {
		pinned = append(pinned, sh.pin(fmt.Sprint("p", i)))
	}
	if n := len(sh.m); n != 9 {
		t.Errorf("%d entries kept, want the 9 in use", n)
	}
	for _, e := range append(pinned, long) {
		sh.unpin(e)
	}
	if n := len(sh.m); n > 4 {
		t.Errorf("all unpinned: %d entries kept with max 4", n)
	}
}
