package polite

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A Transport's local ceilings kept an entry for each origin whose next
// start was ahead, however many: the floor of a robots.txt Crawl-delay
// (capped at 24 hours) put it a day ahead, and sweep dropped no such
// entry, not even past ceilingHard. A crawl led through many origins
// (a server's subdomains: a1.evil.test, a2.evil.test, ...) each asking
// "Crawl-delay: 86400" kept one entry per origin for a day, while the
// Budget (MaxKeys) and the robots cache (MaxOrigins) stayed bounded.
func TestFloorEntriesBoundedWhateverTheCrawlDelay(t *testing.T) {
	const origins = 100_000
	base := roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/robots.txt" {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("User-agent: *\nCrawl-delay: 86400\n")), ContentLength: -1, Request: r}, nil
		}
		return okResponse(r)
	})
	// Every bound the caller can set is small: only the ceilings grow.
	tr := &Transport{Base: base, Robots: &Robots{MaxOrigins: 64}, Budget: &Budget{MaxKeys: 64}}
	var n int
	synctest.Test(t, func(t *testing.T) {
		for i := range origins {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("http://a%d.evil.test/", i), nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			time.Sleep(100 * time.Millisecond) // the crawl lasts under 3 hours of the day each entry is kept
		}
		for i := range tr.ceil.shards {
			sh := &tr.ceil.shards[i]
			sh.mu.Lock()
			n += len(sh.m)
			sh.mu.Unlock()
		}
	})
	limit := ceilingShards * (ceilingHard + 64)
	if n > limit {
		t.Errorf("the local ceilings keep %d entries after %d origins each asking Crawl-delay: 86400; want at most about %d (ceilingShards*ceilingHard), whatever the servers send", n, origins, limit)
	}
}
