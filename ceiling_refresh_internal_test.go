package polite

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A robots.txt refreshed after 24 hours that no longer asks for a
// Crawl-delay lifts the floor (setFloor(o, 0)). A request that began
// before the refresh carries the old floor (g.floor); only an entry made
// anew takes it. Before, a reservation found e.floor == 0 and wrote the
// old floor back: the next request, which robots.txt no longer spaced,
// waited the old Crawl-delay (30 s).
func TestLiftedCrawlDelayStaysLifted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu      sync.Mutex
			fetches int
			sent    = map[string]time.Time{}
		)
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/robots.txt" {
				mu.Lock()
				fetches++
				n := fetches
				mu.Unlock()
				body := "User-agent: *\n"
				if n == 1 {
					body += "Crawl-delay: 30\n"
				}
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), ContentLength: -1, Request: r}, nil
			}
			mu.Lock()
			sent[r.URL.Path] = time.Now()
			mu.Unlock()
			if r.URL.Path == "/r1" {
				time.Sleep(25 * time.Hour) // in flight across the robots.txt refresh
			}
			return okResponse(r)
		})
		// A lease longer than r1's request, which its slot outlives.
		tr := &Transport{Base: base, Robots: &Robots{}, MaxConcurrency: 1, MaxWait: 72 * time.Hour, Budget: &Budget{Lease: 48 * time.Hour}}
		get := func(ctx context.Context, path string) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.test"+path, nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		var wg sync.WaitGroup
		wg.Go(func() { get(t.Context(), "/r1") })
		synctest.Wait()
		time.Sleep(time.Minute)                   // past the Crawl-delay of 30s
		wg.Go(func() { get(t.Context(), "/r2") }) // floor 30s read; held by MaxConcurrency
		synctest.Wait()
		time.Sleep(24 * time.Hour) // robots.txt expires
		// A request reads the refreshed robots.txt (no Crawl-delay) and
		// gives up while r1 is in flight.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		get(ctx, "/r3")
		cancel()
		wg.Wait() // r1 ends; r2 goes
		if err := get(t.Context(), "/r4"); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if fetches != 2 {
			t.Fatalf("robots.txt fetched %d times, want 2", fetches)
		}
		if gap := sent["/r4"].Sub(sent["/r2"]); gap >= time.Second {
			t.Errorf("robots.txt no longer asks for a Crawl-delay, yet /r4 went %v after /r2: the lifted Crawl-delay of 30s was written back by /r2, which read it a day before", gap)
		}
	})
}

// The same at the level of the ceilings: a floor lifted by setFloor(o, 0)
// does not come back from a reservation carrying the old one.
func TestCeilingsLiftedFloorStaysLifted(t *testing.T) {
	var c ceilings
	o := originKey("http", "site.test").m
	now := time.Unix(1_700_000_000, 0)
	c.setFloor(o, 10*time.Second) // request A reads Crawl-delay: 10
	c.setFloor(o, 0)              // request B reads the refreshed robots.txt: none
	var tk uint64
	if _, _, ok := c.reserve(o, now, 0, 0, nil, 10*time.Second, &tk, time.Time{}, 0, 0); !ok { // A reserves, carrying 10s
		t.Fatal("A not granted")
	}
	tk = 0
	c.setFloor(o, 0) // B, as robots() does before each request
	_, h, ok := c.reserve(o, now.Add(time.Millisecond), 0, 0, nil, 0, &tk, time.Time{}, 0, 0)
	if !ok {
		t.Errorf("B held until %v (%s) by a Crawl-delay robots.txt no longer asks for", h.until.Sub(now), h.reason)
	}
}

// Crawl-delay units after a space ("2 min"), and a comma with a point
// ("1,000.5"): read as 2 s and ignored before (no delay at all); two
// thousands groups ("1,500,000"): read as 1500 s.
func TestParseCrawlDelay(t *testing.T) {
	for _, tt := range []struct {
		in      string
		atLeast float64
	}{
		{"2 min", 120},
		{"1 h", 3600},
		{"1,000.5", 1000.5},
		{"1,2.5", 1},
		{"1,500,000", 1_500_000}, // two thousands groups: read as 1500 before
	} {
		s, ok := parseCrawlDelay(tt.in)
		if !ok || s < tt.atLeast {
			t.Errorf("parseCrawlDelay(%q) = %v, %v; want at least %v", tt.in, s, ok, tt.atLeast)
		}
	}
}

// RFC 9309 §2.5: the parsing limit "MUST be at least 500 kibibytes". A
// 400 KiB robots.txt of paths written in UTF-8 (each octet kept as three)
// keeps all its rules. A first bound on what is kept (512 KiB) dropped
// the last 3,477 of 11,686, and the paths they disallowed were sent.
func TestRobotsRulesOfLargeFileKept(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	n := 0
	for b.Len() < 400<<10 {
		fmt.Fprintf(&b, "Disallow: /%d/記事記事記事\n", n)
		n++
	}
	f := parseRobots([]byte(b.String()), "mybot")
	last := fmt.Sprintf("/%d/記事記事記事", n-1)
	u := &url.URL{Scheme: "http", Host: "h", Path: last}
	if r, ok := f.match(robotsPath(u)); !ok || r.allow {
		t.Errorf("robots.txt of %d KiB, %d Disallow rules: %q (its last) is allowed; %d rules kept", b.Len()>>10, n, last, f.rules())
	}
}
