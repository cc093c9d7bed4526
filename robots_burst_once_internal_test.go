package polite

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// An origin's robots.txt is fetched once before the first request to it,
// and the requests that come meanwhile wait for that fetch (Robots). Each
// origin's file weighs 4 here (about 14 KB of rules): MaxOrigins 8 holds
// two of the three. A fetch that ended with a file heavier than its entry
// counted made room, and could evict another origin whose fetch had just
// ended, before the requests that waited for it read it: they fetched it
// again, in the same burst (up to 3 times in 50 bursts). They now read
// what the fetch found from its entry, forgotten or not.
func TestRobotsBurstFetchesEachOriginOnce(t *testing.T) { testBurstOnce(t, 8) }

// With room for all three, each was fetched once before too.
func TestRobotsBurstFetchesEachOriginOnceRoomy(t *testing.T) { testBurstOnce(t, 100) }

// testBurstOnce sends 4 requests to each of 3 origins while their
// robots.txt fetches are held, then lets the fetches end together, 50
// times under a Robots of MaxOrigins origins, and fails if any origin's
// robots.txt was fetched more than once in a burst.
func testBurstOnce(t *testing.T, origins int) {
	rules := "User-agent: *\n" + strings.Repeat("Disallow: /private/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 200)
	worst := 0
	for range 50 {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			var mu sync.Mutex
			fetches := map[string]int{}
			base := robotsRT(func(req *http.Request) (*http.Response, error) {
				mu.Lock()
				fetches[req.URL.Host]++
				mu.Unlock()
				<-release
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(rules)), Request: req}, nil
			})
			r := &Robots{MaxOrigins: origins}
			var wg sync.WaitGroup
			var fails atomic.Int32
			hosts := []string{"x.example", "y.example", "z.example"}
			for _, h := range hosts {
				for range 4 {
					wg.Go(func() {
						if _, err := r.check(t.Context(), base, robotsReq(t, t.Context(), "http://"+h+"/page")); err != nil {
							fails.Add(1)
						}
					})
				}
			}
			synctest.Wait()
			close(release)
			wg.Wait()
			mu.Lock()
			for _, n := range fetches {
				worst = max(worst, n)
			}
			mu.Unlock()
		})
	}
	if worst > 1 {
		t.Errorf("in one burst of requests, an origin's robots.txt was fetched %d times, want once", worst)
	}
}
