package polite

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// TestMemoEntryMatches checks that the in-memory store, which takes the
// entry it looked up last for a key from a Transport's memo without
// comparing keys, grants every request from the entry that comparing keys
// finds: the key's own, current entry. Two Transports share a Budget (two
// memos for each origin), origins alternate and share memo slots, and keys
// are forgotten (their entries replaced) at random, before a request or
// while it is in flight.
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
		if r.IntN(40) == 0 {
			b.Forget(key.m.String()) // in flight: released on a new entry
		}
		var arr arrival
		g.arrive(&arr)
		out := control.Outcome{First: true, Bytes: -1}
		b.mem.releaseAccepted(&key.m, &arr, &b.cfg, &g, &out)
	}
	if shortcut < 300 {
		t.Fatalf("the memo's entry was taken without comparing keys %d times in 5000, want at least 300", shortcut)
	}
}

// TestReleaseAcceptedMatches checks that releaseAccepted, with which
// RoundTrip applies an answer that was not a refusal, leaves a key's state
// as releaseAt does: two stores see the same requests and answers (with
// quotas or without, bodies kept in flight, keys forgotten meanwhile), one
// released through each, and their states' binary forms must agree after
// every answer.
func TestReleaseAcceptedMatches(t *testing.T) {
	var ba, bb Budget
	ba.init()
	bb.init()
	r := rand.New(rand.NewPCG(9, 10))
	keys := []memKey{{scheme: "http", host: "a.test"}, {scheme: "http", host: "b.test"}}
	var c clock
	for step := range 3000 {
		k := keys[r.IntN(len(keys))]
		if r.IntN(50) == 0 {
			ba.Forget(k.String())
			bb.Forget(k.String())
		}
		now := c.read()
		var ga, gb lease
		var ask control.Ask
		_, oka := ba.mem.acquireAt(&budgetKey{m: k}, now, &ba.cfg, &ask, &ga)
		_, okb := bb.mem.acquireAt(&budgetKey{m: k}, now, &bb.cfg, &ask, &gb)
		if oka != okb {
			t.Fatalf("step %d: granted %v and %v", step, oka, okb)
		}
		if !oka {
			continue
		}
		if r.IntN(50) == 0 {
			ba.Forget(k.String())
			bb.Forget(k.String())
		}
		var arr arrival
		ga.arrive(&arr)
		out := control.Outcome{First: r.IntN(2) == 0, Bytes: -1, Keep: r.IntN(8) == 0}
		if r.IntN(4) == 0 {
			out.Quotas = []parse.Quota{{Policy: "p", Dialect: "ietf", Limit: 100, Window: time.Second, Remaining: int64(r.IntN(100)), Reset: time.Second}}
		}
		out2 := out
		ba.mem.releaseAt(&k, arr.wall, arr.ns, &ba.cfg, &ga, &out)
		bb.mem.releaseAccepted(&k, &arr, &bb.cfg, &gb, &out2)
		if out.Keep {
			ba.mem.end(k, arr.wall, &ba.cfg, &ga)
			bb.mem.end(k, arr.wall, &bb.cfg, &gb)
		}
		sa, _ := ba.mem.view(k, arr.wall, &ba.cfg)
		sb, _ := bb.mem.view(k, arr.wall, &bb.cfg)
		if !reflect.DeepEqual(sa, sb) {
			t.Fatalf("step %d: releaseAt leaves %+v, releaseAccepted %+v", step, sa, sb)
		}
		var ka, kb []byte
		ba.mem.Update(context.Background(), k.String(), func(s *KeyState) { ka, _ = s.MarshalBinary() })
		bb.mem.Update(context.Background(), k.String(), func(s *KeyState) { kb, _ = s.MarshalBinary() })
		if !bytes.Equal(ka, kb) {
			t.Fatalf("step %d: releaseAt leaves %x, releaseAccepted %x", step, ka, kb)
		}
	}
}
