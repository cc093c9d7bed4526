package polite

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// The fetch of an expired robots.txt is a request to the origin, whose
// Crawl-delay is known then, as the fetch a recheck makes is (sent in the
// request's paced start). When the request that found the file expired
// came after the expiry, the fetch went at once: 1.5 s after the previous
// request, under Crawl-delay: 10.
func TestRobotsRefetchKeepsCrawlDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nCrawl-delay: 10\n"})
		tr := &Transport{Base: robotsBase(h), Robots: &Robots{}}
		get := func(path string) {
			t.Helper()
			resp, err := tr.RoundTrip(robotsReq(t, t.Context(), "http://127.0.0.1"+path))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		get("/a")
		time.Sleep(24*time.Hour - time.Second)
		get("/b") // the last request the file of the first fetch decides
		time.Sleep(1500 * time.Millisecond)
		get("/c") // the file has expired: fetched again
		st := h.Stats()
		if len(st.FetchTimes) != 2 || len(st.Arrivals) != 3 {
			t.Fatalf("%d fetches and %d requests, want 2 and 3", len(st.FetchTimes), len(st.Arrivals))
		}
		if gap := st.FetchTimes[1].Sub(st.Arrivals[1]); gap < 10*time.Second {
			t.Errorf("robots.txt fetched again %v after the previous request to the origin, want at least its Crawl-delay of 10s", gap)
		}
	})
}

// An expired file fetched again in the paced start of the request that
// found it expired still decides that request, and those that found it
// expired together wait for the one fetch.
func TestRobotsRefetchPacedDecides(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var body atomic.Value
		body.Store("User-agent: *\nCrawl-delay: 10\n")
		var mu sync.Mutex
		var fetches, pages []time.Time
		var paths []string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			if r.URL.Path == "/robots.txt" {
				fetches = append(fetches, time.Now())
				io.WriteString(w, body.Load().(string))
				return
			}
			pages = append(pages, time.Now())
			paths = append(paths, r.URL.Path)
		})
		tr := &Transport{Base: &ratelimittest.Transport{Handler: h}, Robots: &Robots{}}
		get := func(path string) error {
			resp, err := tr.RoundTrip(robotsReq(t, t.Context(), "http://127.0.0.1"+path))
			if err != nil {
				return err
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return nil
		}
		if err := get("/a"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(24*time.Hour + time.Second)
		body.Store("User-agent: *\nCrawl-delay: 10\nDisallow: /private/\n")
		last := pages[0]
		errs := make([]error, 3)
		var wg sync.WaitGroup
		for i, p := range []string{"/private/x", "/b", "/c"} {
			wg.Go(func() { errs[i] = get(p) })
			time.Sleep(time.Millisecond)
		}
		wg.Wait()
		if len(fetches) != 2 {
			t.Fatalf("robots.txt fetched %d times, want 2", len(fetches))
		}
		if gap := fetches[1].Sub(last); gap < 10*time.Second {
			t.Errorf("robots.txt fetched again %v after the origin's last request, want at least 10s", gap)
		}
		var re *RobotsError
		if !errors.As(errs[0], &re) {
			t.Errorf("/private/x, disallowed by the file fetched again: %v, want a *RobotsError", errs[0])
		}
		if errs[1] != nil || errs[2] != nil {
			t.Errorf("/b and /c: %v, %v; want both sent", errs[1], errs[2])
		}
		for _, p := range paths {
			if p == "/private/x" {
				t.Errorf("/private/x was sent")
			}
		}
		if len(paths) != 3 {
			t.Errorf("pages sent %v, want /a, /b and /c", paths)
		}
	})
}
