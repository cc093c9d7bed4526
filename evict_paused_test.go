package polite_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A key the server paused for an hour (a Retry-After past MaxWait, its
// 429 returned) and no request waits on is kept when MaxKeys fills, and a
// key that is only idle goes in its place. The least recently used went
// first whatever it was: once three more origins were used, the hour's
// pause was forgotten and the next request to the paused origin went at
// once.
func TestMaxKeysKeepsPausedKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host == "paused.test" {
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		b := &polite.Budget{MaxKeys: 3}
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: b}}
		if code, _ := get(t, c, "http://paused.test/"); code != http.StatusTooManyRequests {
			t.Fatalf("paused.test: status %d, want 429 returned (an hour is past MaxWait)", code)
		}
		time.Sleep(time.Second)
		for _, host := range []string{"o1", "o2", "o3"} {
			get(t, c, "http://"+host+".test/")
		}
		s, ok := b.Inspect("http://paused.test", time.Now())
		if !ok || s.PauseUntil.Before(time.Now().Add(59*time.Minute)) {
			t.Errorf("paused.test after three more origins: kept %v, paused until %v; want kept, paused for the rest of the hour", ok, s.PauseUntil)
		}
		if _, ok := b.Inspect("http://o1.test", time.Now()); ok {
			t.Errorf("o1.test kept, want it evicted in the paused key's place (the least recently used of those not paused)")
		}
	})
}
