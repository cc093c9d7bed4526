package polite_test

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A request to b.example, under a key it shares with requests to
// a.example (Crawl-delay: 5), does not wait out a.example's Crawl-delay:
// the floor paces the origin, not the key (DESIGN.md §9), and nothing of
// b.example's or of the key's own pace (MaxRate 10: 100 ms) holds it.
//
// a.example is reached under two keys (acct1, acct2: a Key per
// credential, as Transport.Key suggests). A request to a.example under
// acct1, held by acct1's MaxRate, took the head of acct1's line; before
// its turn, acct2 took a.example's floor. Woken at its turn, it was held
// by that floor for 5 s while still at the head of acct1's line, and every
// request under acct1 (b.example's too) waited behind it.
func TestKeyLineNotHeldByAnotherOriginsFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nCrawl-delay: 5\n"})
		b := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nAllow: /\n"})
		var mu sync.Mutex
		arrived := map[string]time.Time{}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			arrived[r.Host+r.URL.Path] = time.Now()
			mu.Unlock()
			if r.Host == "a.example" {
				a.ServeHTTP(w, r)
				return
			}
			b.ServeHTTP(w, r)
		})
		tr := &polite.Transport{
			Base:    &ratelimittest.Transport{Handler: h},
			Robots:  &polite.Robots{UserAgent: "mybot"},
			MaxRate: 10,
			Key:     func(r *http.Request) string { return r.Header.Get("X-Account") },
		}
		get := func(acct, url string) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("X-Account", acct)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		// Both robots.txt read; then a.example's floor and acct1's pace
		// are free again.
		get("acct3", "http://a.example/warm")
		get("acct1", "http://b.example/warm")
		time.Sleep(6 * time.Second)

		t0 := time.Now()
		get("acct1", "http://b.example/0") // acct1's next start: t0+100ms
		var wg sync.WaitGroup
		wg.Go(func() { get("acct1", "http://a.example/1") }) // held by acct1's pace: head of its line
		synctest.Wait()
		get("acct2", "http://a.example/2") // takes a.example's floor: its next start t0+5s
		wg.Go(func() { get("acct1", "http://b.example/3") })
		wg.Wait()

		mu.Lock()
		defer mu.Unlock()
		at := func(p string) time.Duration { return arrived[p].Sub(t0) }
		t.Logf("b.example/0 at %v, a.example/2 at %v, a.example/1 at %v, b.example/3 at %v",
			at("b.example/0"), at("a.example/2"), at("a.example/1"), at("b.example/3"))
		if d := at("b.example/3"); d > time.Second {
			t.Errorf("b.example/3 (no Crawl-delay; acct1's MaxRate of 10 lets it go at 100ms-200ms) sent at %v, held by a.example's Crawl-delay of 5s", d)
		}
	})
}

// The same without a custom Key. A crawler that dials fixed addresses
// names the site in Host: the budget key is the address, the Crawl-delay
// the site's ("its Crawl-delay spaces the site's requests", doc.go).
// slow.example (Crawl-delay: 5) is served at 192.0.2.1 and 192.0.2.2;
// fast.example (none) at 192.0.2.1. A request to fast.example at
// 192.0.2.1 waited out slow.example's Crawl-delay.
func TestAddressLineNotHeldByAnotherSitesFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nCrawl-delay: 5\n"})
		fast := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nAllow: /\n"})
		var mu sync.Mutex
		arrived := map[string]time.Time{}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			arrived[r.Host+r.URL.Path] = time.Now()
			mu.Unlock()
			if r.Host == "slow.example" {
				slow.ServeHTTP(w, r)
				return
			}
			fast.ServeHTTP(w, r)
		})
		tr := &polite.Transport{
			Base:    &ratelimittest.Transport{Handler: h},
			Robots:  &polite.Robots{UserAgent: "mybot"},
			MaxRate: 10,
		}
		get := func(addr, host, path string) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+path, nil)
			if err != nil {
				t.Error(err)
				return
			}
			req.Host = host
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		get("192.0.2.3", "slow.example", "/warm")
		get("192.0.2.1", "fast.example", "/warm")
		time.Sleep(6 * time.Second)

		t0 := time.Now()
		get("192.0.2.1", "fast.example", "/0") // 192.0.2.1's next start: t0+100ms
		var wg sync.WaitGroup
		wg.Go(func() { get("192.0.2.1", "slow.example", "/1") }) // held by the address's pace: head of its line
		synctest.Wait()
		get("192.0.2.2", "slow.example", "/2") // takes slow.example's floor: its next start t0+5s
		wg.Go(func() { get("192.0.2.1", "fast.example", "/3") })
		wg.Wait()

		mu.Lock()
		defer mu.Unlock()
		at := func(p string) time.Duration { return arrived[p].Sub(t0) }
		t.Logf("fast/0 at %v, slow/2 at %v, slow/1 at %v, fast/3 at %v",
			at("fast.example/0"), at("slow.example/2"), at("slow.example/1"), at("fast.example/3"))
		if d := at("fast.example/3"); d > time.Second {
			t.Errorf("fast.example/3 (no Crawl-delay; MaxRate 10 lets it go at 100ms-200ms) sent at %v, held by slow.example's Crawl-delay of 5s", d)
		}
	})
}

// The same with a crawler's usual settings, Restraint and no MaxRate. A
// request held for acct1's one Restraint slot takes the head of acct1's
// line (DESIGN.md §5: "A request held for a slot ... takes a ticket in the
// same line"); held then by a.example's floor, which acct2 took, it kept
// b.example's request under acct1 waiting 5 s, though acct1's slot freed
// at 500 ms and b.example asks no delay.
func TestKeySlotLineNotHeldByAnotherOriginsFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nCrawl-delay: 5\n"})
		b := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nAllow: /\n"})
		var mu sync.Mutex
		arrived := map[string]time.Time{}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			arrived[r.Host+r.URL.Path] = time.Now()
			mu.Unlock()
			if r.URL.Path == "/0" {
				time.Sleep(500 * time.Millisecond)
			}
			if r.Host == "a.example" {
				a.ServeHTTP(w, r)
				return
			}
			b.ServeHTTP(w, r)
		})
		tr := &polite.Transport{
			Base:      &ratelimittest.Transport{Handler: h},
			Robots:    &polite.Robots{UserAgent: "mybot"},
			Restraint: &polite.Restraint{MaxConcurrency: 1},
			Key:       func(r *http.Request) string { return r.Header.Get("X-Account") },
		}
		get := func(acct, url string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
			req.Header.Set("X-Account", acct)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		get("acct3", "http://a.example/warm")
		get("acct1", "http://b.example/warm")
		time.Sleep(6 * time.Second)
		t0 := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() { get("acct1", "http://b.example/0") }) // holds acct1's one slot for 500ms
		synctest.Wait()
		wg.Go(func() { get("acct1", "http://a.example/1") }) // held for the slot: head of acct1's line
		synctest.Wait()
		get("acct2", "http://a.example/2")
		wg.Go(func() { get("acct1", "http://b.example/3") })
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		at := func(p string) time.Duration { return arrived[p].Sub(t0) }
		t.Logf("b/0 %v a/2 %v a/1 %v b/3 %v", at("b.example/0"), at("a.example/2"), at("a.example/1"), at("b.example/3"))
		if d := at("b.example/3"); d > time.Second {
			t.Errorf("b.example/3 (no Crawl-delay; acct1's Restraint slot frees at 500ms) sent at %v, held by a.example's Crawl-delay of 5s", d)
		}
	})
}
