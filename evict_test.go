package polite_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// Which key a full MemoryStore evicts: of the 8 least recently used, the
// one whose state holds its next start back least long.

// pausing answers 429 with the Retry-After retryAfter returns for the
// request's host, or 200 when it returns "".
func pausing(retryAfter func(host string) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ra := retryAfter(r.Host); ra != "" {
			w.Header().Set("Retry-After", ra)
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
}

// budgetClient returns a client whose polite Transport, of MaxWait
// maxWait (0: the default), serves h in memory under b.
func budgetClient(b *polite.Budget, maxWait time.Duration, h http.Handler) *http.Client {
	return &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: b, MaxWait: maxWait}}
}

// A key the server paused for an hour (a Retry-After past MaxWait, its
// 429 returned) and no request waits on is kept when MaxKeys fills, and a
// key that is only idle goes in its place. The least recently used went
// first whatever it was: once three more origins were used, the hour's
// pause was forgotten and the next request to the paused origin went at
// once.
func TestMaxKeysKeepsPausedKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		b := &polite.Budget{MaxKeys: 3}
		c := budgetClient(b, 0, pausing(func(host string) string { return map[string]string{"paused.test": "3600"}[host] }))
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
		b := &polite.Budget{MaxKeys: 64, MaxRate: 0.1}
		c := budgetClient(b, 0, pausing(func(host string) string {
			if host == "good.test" {
				return ""
			}
			return "3600"
		}))
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
		h := pausing(func(host string) string { return map[string]string{"paused.test": "2"}[host] })
		b := &polite.Budget{MaxKeys: 2, MaxRate: 0.1}
		short, c := budgetClient(b, time.Second, h), budgetClient(b, 0, h)
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
		c := budgetClient(b, time.Second, h)
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
