package polite_test

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A server that pauses every origin it serves for an hour (Retry-After
// 3600 on every 429, returned to the caller) fills a MaxKeys 64 store with
// paused keys; good.test, another origin, is used once after 63 of them,
// then 16 more paused origins come. good.test is then the 48th least
// recently used key and is kept, so its next request waits out MaxRate's
// spacing (10s) since its first. When eviction preferred keys not paused
// and moved to the front every paused key it passed, even when it then
// evicted one of them (all 8 it looked at paused), each new key moved 7
// paused keys ahead of good.test, which was evicted at the 8th new key
// while 56 paused keys older than it were kept, and its next request went
// at once: under a server that pauses every key, a key just used lasted
// MaxKeys/8 new keys instead of MaxKeys.
func TestEvictPausedKeepsRecentKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host != "good.test" {
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		b := &polite.Budget{MaxKeys: 64, MaxRate: 0.1}
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: b}}
		for i := range 63 {
			get(t, c, fmt.Sprintf("http://h%d.test/", i))
		}
		if code, _ := get(t, c, "http://good.test/"); code != http.StatusOK {
			t.Fatalf("good.test: status %d, want 200", code)
		}
		start := time.Now()
		for i := 63; i < 63+16; i++ {
			get(t, c, fmt.Sprintf("http://h%d.test/", i))
		}
		if _, ok := b.Inspect("http://good.test", time.Now()); !ok {
			t.Errorf("good.test evicted after 16 new keys, with 48 paused keys older than it still kept; want kept (MaxKeys 64, least recently used first)")
		}
		get(t, c, "http://good.test/")
		if d := time.Since(start); d < 10*time.Second {
			t.Errorf("good.test's second request went %v after its first; want MaxRate's 10s (its state evicted, the spacing was forgotten)", d)
		}
	})
}
