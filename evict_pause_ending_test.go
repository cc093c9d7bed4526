package polite_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// MaxKeys 2, MaxRate one request per 10s. paused.test is refused with
// Retry-After 2 (past its Transport's MaxWait 1s, so the 429 goes back to
// the caller) and api.test is used just after it. 1.999s later a third
// origin comes: the least recently used key is paused.test, whose pause
// ends in a millisecond; evicting it forgets nothing that still matters.
// When eviction preferred any key not paused at the instant, however
// short the pause left, it kept paused.test and evicted api.test, with 8s
// of MaxRate's spacing still to run, and api.test's next request went at
// once instead of 10s after its first.
func TestEvictPauseEndingNowGoesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host == "paused.test" {
				w.Header().Set("Retry-After", "2")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		b := &polite.Budget{MaxKeys: 2, MaxRate: 0.1}
		short := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: b, MaxWait: time.Second}}
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: b}}
		if code, _ := get(t, short, "http://paused.test/"); code != http.StatusTooManyRequests {
			t.Fatalf("paused.test: status %d, want 429 returned (2s is past MaxWait)", code)
		}
		start := time.Now()
		get(t, c, "http://api.test/")
		time.Sleep(2*time.Second - time.Millisecond)
		if s, ok := b.Inspect("http://paused.test", time.Now()); !ok || s.PauseUntil.IsZero() {
			t.Fatalf("paused.test kept %v, paused until %v; want still paused (the premise)", ok, s.PauseUntil)
		}
		get(t, c, "http://other.test/")
		if _, ok := b.Inspect("http://api.test", time.Now()); !ok {
			t.Errorf("api.test evicted, its 10s spacing unfinished, in favour of paused.test (least recently used, its pause ending in 1ms)")
		}
		get(t, c, "http://api.test/")
		if d := time.Since(start); d < 10*time.Second {
			t.Errorf("api.test's second request went %v after its first; want MaxRate's 10s", d)
		}
	})
}
