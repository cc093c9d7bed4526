package polite_test

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// MaxKeys 2. paused.test is refused with Retry-After 5 (past MaxWait 1s,
// so the 429 goes back to the caller); quota.test is used just after it,
// and its server states RateLimit-Policy "hourly";q=1;w=3600: one request
// an hour, so quota.test's next start is held back an hour by the stated
// quota's pace (Inspect's next start says 01:00), a hold that is neither a
// pause nor MaxRate's spacing. A second later a third origin comes.
//
// Judged by its pause and MaxRate's spacing alone, quota.test held
// nothing back and went before paused.test (the least recently used key,
// whose pause ends in 4s): its next request went to the server at once,
// its one request an hour already spent. The key whose eviction forgets
// least is paused.test.
func TestEvictKeepsStatedPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		sent := map[string]int{}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sent[r.Host]++
			switch r.Host {
			case "paused.test":
				w.Header().Set("Retry-After", "5")
				w.WriteHeader(http.StatusTooManyRequests)
			case "quota.test":
				w.Header().Set("RateLimit-Policy", `"hourly";q=1;w=3600`)
			}
		})
		b := &polite.Budget{MaxKeys: 2}
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: b, MaxWait: time.Second}}
		if code, _ := get(t, c, "http://paused.test/"); code != http.StatusTooManyRequests {
			t.Fatalf("paused.test: status %d, want 429 returned (5s is past MaxWait)", code)
		}
		if code, _ := get(t, c, "http://quota.test/"); code != http.StatusOK {
			t.Fatalf("quota.test: status %d, want 200", code)
		}
		time.Sleep(time.Second)
		if s, ok := b.Inspect("http://paused.test", time.Now()); !ok || s.PauseUntil.IsZero() {
			t.Fatalf("paused.test kept %v, paused until %v; want still paused (the premise)", ok, s.PauseUntil)
		}
		get(t, c, "http://other.test/")
		if _, ok := b.Inspect("http://quota.test", time.Now()); !ok {
			t.Errorf("quota.test evicted, its stated one request an hour spent, in favour of paused.test (least recently used, its pause ending in 4s)")
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://quota.test/", nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		var we *polite.WaitError
		if !errors.As(err, &we) || sent["quota.test"] != 1 {
			t.Errorf("quota.test's second request 1s after its first, under q=1;w=3600: err %v, sent to the server %d times; want a WaitError (held an hour, MaxWait 1s) and sent once", err, sent["quota.test"])
		}
	})
}
