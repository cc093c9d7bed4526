package ratelimittest_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// robotsGet sends a GET of url to h in memory, without following
// redirects, and returns the response with its body read.
func robotsGet(t *testing.T, h http.Handler, url string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestRobotsHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body := "User-agent: *\nDisallow: /private/\nCrawl-delay: 0.5\n"
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: body})
		resp, got := robotsGet(t, h, "http://a.example/robots.txt")
		if resp.StatusCode != 200 || got != body || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("robots.txt: %d %q %q, want 200 with the body as text/plain", resp.StatusCode, resp.Header.Get("Content-Type"), got)
		}
		robotsGet(t, h, "http://b.example/robots.txt")
		robotsGet(t, h, "http://a.example/page?x=1")
		robotsGet(t, h, "http://a.example/page")
		st := h.Stats()
		if st.Fetches != 2 || st.FetchesByHost["a.example"] != 1 || st.FetchesByHost["b.example"] != 1 || len(st.FetchTimes) != 2 {
			t.Errorf("fetches %d %v, want one per host", st.Fetches, st.FetchesByHost)
		}
		if st.Requests != 2 || st.Paths["/page"] != 2 || len(st.Arrivals) != 2 {
			t.Errorf("requests %d %v, want 2 for /page", st.Requests, st.Paths)
		}

		// Set changes the answer and keeps the counts.
		h.Set(ratelimittest.RobotsConfig{Status: 503, RetryAfter: 1500 * time.Millisecond})
		resp, _ = robotsGet(t, h, "http://a.example/robots.txt")
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "2" {
			t.Errorf("after Set: %d Retry-After %q, want 503 and 2", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if got := h.Stats().Fetches; got != 3 {
			t.Errorf("%d fetches after Set, want 3", got)
		}
	})
}

func TestRobotsHandlerNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") })
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Next: next})
		if _, got := robotsGet(t, h, "http://a.example/x"); got != "page" {
			t.Errorf("Next: body %q, want page", got)
		}
	})
}

func TestRobotsHandlerRedirects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Redirects: 2, RedirectTo: "https://b.example/robots.txt", Body: "x"})
		var locs []string
		url := "http://a.example/robots.txt"
		for range 3 {
			resp, body := robotsGet(t, h, url)
			if resp.StatusCode != http.StatusMovedPermanently {
				if body != "x" {
					t.Errorf("final answer %q, want the body", body)
				}
				break
			}
			loc := resp.Header.Get("Location")
			locs = append(locs, loc)
			if strings.HasPrefix(loc, "/") {
				url = "http://a.example" + loc
			} else {
				url = loc + "?hop=2"
			}
		}
		if got, want := strings.Join(locs, " "), "/robots.txt?hop=1 https://b.example/robots.txt"; got != want {
			t.Errorf("redirects to %q, want %q", got, want)
		}

		h = ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Redirects: -1})
		for range 10 {
			if resp, _ := robotsGet(t, h, "http://a.example/robots.txt?hop=100"); resp.StatusCode != http.StatusMovedPermanently {
				t.Fatalf("Redirects -1: %d, want a redirect every time", resp.StatusCode)
			}
		}
	})
}

func TestRobotsHandlerPad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, pad := range []int{1, 2, 121, 7744, 7745, 600 << 10} {
			h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Pad: pad, Body: "User-agent: *\n"})
			_, body := robotsGet(t, h, "http://a.example/robots.txt")
			if len(body) != pad+len("User-agent: *\n") || !strings.HasSuffix(body, "\nUser-agent: *\n") {
				t.Errorf("Pad %d: %d bytes ending %q, want comment lines then the body", pad, len(body), body[max(0, len(body)-20):])
			}
		}
	})
}

func TestRobotsHandlerDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Delay: 3 * time.Second})
		var wg sync.WaitGroup
		start := time.Now()
		for range 4 {
			wg.Go(func() { robotsGet(t, h, "http://a.example/robots.txt") })
		}
		wg.Wait()
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("4 fetches at once took %v, want 3s each, in parallel", d)
		}
	})
}

// The last redirect, to RedirectTo, ends the redirects when RedirectTo is
// served by the same handler: another origin it serves, or its own
// robots.txt by another scheme. Before, the request for RedirectTo began
// the redirects again, for ever: a client that follows redirects gave up
// after 10, and a robots.txt that Disallow'ed nothing was never read.
func TestRobotsHandlerRedirectToSameHandlerEnds(t *testing.T) {
	for _, tt := range []struct {
		name, first, to string
		fetches         int
	}{
		{"another origin served", "http://a.example/robots.txt", "https://b.example/robots.txt", 3},
		{"the same origin by http", "https://a.example/robots.txt", "http://a.example/robots.txt", 3},
		{"the first URL itself: no redirect", "http://a.example/robots.txt", "http://a.example/robots.txt", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Redirects: 2, RedirectTo: tt.to, Body: "x"})
				c := &http.Client{Transport: &ratelimittest.Transport{Handler: h}}
				resp, err := c.Get(tt.first)
				if err != nil {
					t.Fatalf("GET %s: %v (after %d fetches)", tt.first, err, h.Stats().Fetches)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 || string(body) != "x" || resp.Request.URL.String() != tt.to {
					t.Errorf("GET %s: %d %q from %s, want 200 x from %s", tt.first, resp.StatusCode, body, resp.Request.URL, tt.to)
				}
				if got := h.Stats().Fetches; got != tt.fetches {
					t.Errorf("%d fetches, want %d", got, tt.fetches)
				}
			})
		})
	}
}
