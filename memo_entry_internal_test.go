package polite

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/politehttp/polite/internal/control"
)

// TestMemoEntryMatches checks that the in-memory store, which takes the
// entry it looked up last for a key from a Transport's memo without
// comparing keys, grants every request from the entry that comparing keys
// finds: the key's own, current entry. Two Transports share a Budget (two
// memos for each origin), origins alternate and share memo slots, and keys
// are forgotten (their entries replaced) at random.
func TestMemoEntryMatches(t *testing.T) {
	b := &Budget{}
	trs := []*Transport{{Budget: b}, {Budget: b}}
	var urls []string
	for i := range 12 {
		urls = append(urls, fmt.Sprintf("http://o%d.test/", i))
	}
	r := rand.New(rand.NewPCG(3, 4))
	shortcut := 0
	for step := range 5000 {
		tr := trs[r.IntN(len(trs))]
		req, _ := http.NewRequest(http.MethodGet, urls[r.IntN(4+r.IntN(len(urls)-3))], nil)
		var kb budgetKey
		key := tr.originOf(req, tr.budgetOf(), &kb)
		if r.IntN(40) == 0 {
			b.Forget(key.m.String())
		}
		now := tr.clock.read()
		var g lease
		var ask control.Ask
		sh := b.mem.shard(key.m)
		sh.mu.Lock()
		if e := sh.last; e != nil && key.memo != nil && e.memo == key.memo {
			shortcut++
		}
		sh.mu.Unlock()
		if _, ok := b.mem.acquireAt(key, now, &b.cfg, &ask, &g); !ok {
			t.Fatalf("step %d: %s held", step, key.m)
		}
		sh.mu.Lock()
		want := sh.m[key.m]
		sh.mu.Unlock()
		if g.e == nil || g.e != want || g.e.key != key.m || g.e.gone {
			t.Fatalf("step %d: %s granted by entry %p (key %s, gone %v), want its entry %p", step, key.m, g.e, g.e.key, g.e.gone, want)
		}
		var arr arrival
		g.arrive(&arr)
		out := control.Outcome{First: true, Bytes: -1}
		b.mem.releaseAt(&key.m, arr.wall, arr.ns, &b.cfg, &g, &out)
	}
	if shortcut < 300 {
		t.Fatalf("the memo's entry was taken without comparing keys %d times in 5000, want at least 300", shortcut)
	}
}
