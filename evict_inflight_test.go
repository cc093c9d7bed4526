package polite_test

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// Of the 8 least recently used keys that may go, the one that holds its
// next start back least long goes first (MemoryStore): a key with a
// request in flight may not go, and is not one of the 8. The least
// recently used key is paused for an hour, the next seven have a request
// in flight, and the ninth holds nothing back: a new key evicts the
// ninth. Counted among the 8, the keys in flight left the paused key the
// only one to go, and its next request reached the server within its
// hour's Retry-After.
func TestEvictPassesKeysInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		b := &polite.Budget{MaxKeys: 9}
		release := make(chan struct{})
		var pausedHits atomic.Int32
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.Host {
			case "paused.test":
				pausedHits.Add(1)
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(http.StatusTooManyRequests)
			case "idle.test", "new.test":
			default:
				<-release // in flight until released
			}
		})
		c := budgetClient(b, 0, h)
		if code, _ := get(t, c, "http://paused.test/"); code != http.StatusTooManyRequests {
			t.Fatalf("paused.test: status %d, want 429 returned", code)
		}
		var wg sync.WaitGroup
		for i := range 7 {
			wg.Go(func() { get(t, c, fmt.Sprintf("http://f%d.test/", i)) })
			synctest.Wait()
		}
		get(t, c, "http://idle.test/")
		get(t, c, "http://new.test/") // the store is full: one key goes
		s, ok := b.Inspect("http://paused.test", time.Now())
		_, idleKept := b.Inspect("http://idle.test", time.Now())
		if !ok || s.PauseUntil.Before(time.Now().Add(59*time.Minute)) {
			t.Errorf("paused.test evicted (kept %v, pause until %v) while idle.test, holding nothing back, was kept (%v): want idle.test to go", ok, s.PauseUntil, idleKept)
		}
		// Its next request waits for the pause, or fails at once with a
		// *WaitError when it may not wait an hour: it is not sent.
		resp, err := c.Get("http://paused.test/")
		if err == nil {
			resp.Body.Close()
		}
		var we *polite.WaitError
		if n := pausedHits.Load(); n != 1 || !errors.As(err, &we) {
			t.Errorf("paused.test reached the server %d times within its hour's Retry-After (error %v), want 1 and a *WaitError", n, err)
		}
		close(release)
		wg.Wait()
	})
}
