package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// site serves pages pages, each linking to all of them and to a private
// page of its own that robots.txt disallows (and that links nowhere), behind a rate limit of 20 requests a
// second stated in the IETF fields.
func site(pages int) (*ratelimittest.RobotsHandler, *ratelimittest.Handler) {
	html := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		b.WriteString("<html><body>")
		if !strings.HasPrefix(r.URL.Path, "/private") {
			for i := range pages {
				fmt.Fprintf(&b, `<a href="/page/%d">page %d</a> `, i, i)
			}
			fmt.Fprintf(&b, `<a href="/private%s">private</a>`, r.URL.Path)
		}
		b.WriteString("</body></html>")
		io.WriteString(w, b.String())
	})
	limited := ratelimittest.NewHandler(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 20, Window: time.Second}},
		Next:     html,
	})
	robots := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{
		Body: "User-agent: *\nDisallow: /private\n",
		Next: limited,
	})
	return robots, limited
}

func TestCrawl(t *testing.T) {
	const pages = 30
	robots, limited := site(pages)
	srv := httptest.NewServer(robots)
	defer srv.Close()

	res, err := crawl(t.Context(), srv.URL+"/", "examplebot/1.0", srv.Client().Transport, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Errorf("errors: %v", res.Errors)
	}
	public := 0
	for _, u := range res.Visited {
		if !strings.Contains(u, "/private") {
			public++
		}
	}
	if public != pages+1 {
		t.Errorf("visited %d public pages, want %d: %v", public, pages+1, res.Visited)
	}
	st := limited.Stats()
	t.Logf("%d requests, %d refused, %d pages, %d not sent", st.Requests, st.Refused, len(res.Visited), res.Disallowed)
	if st.Refused != 0 {
		t.Errorf("the site refused %d requests, want 0", st.Refused)
	}

	private := 0
	for path, n := range robots.Stats().Paths {
		if strings.HasPrefix(path, "/private") {
			private += n
		}
	}
	if private != 0 {
		t.Errorf("%d requests reached paths robots.txt disallows, want 0", private)
	}
	if got := robots.Stats().Fetches; got != 1 {
		t.Errorf("robots.txt fetched %d times, want once", got)
	}
	if res.Disallowed != pages+1 {
		t.Errorf("%d requests not sent, want the %d private links", res.Disallowed, pages+1)
	}
}

// TestCrawlDelay crawls a site whose robots.txt asks a pause between
// requests: colly's own client timed out every page queued more than 10s
// behind, counting the time it waited in polite for its turn; and, with
// every link handed to polite at once, the pages queued more than MaxWait
// behind failed (61 of 101 pages crawled at 10 s).
func TestCrawlDelay(t *testing.T) {
	for _, tt := range []struct {
		pages int
		delay time.Duration
	}{{30, time.Second}, {100, 10 * time.Second}} {
		t.Run(fmt.Sprint(tt.pages, "x", tt.delay), func(t *testing.T) { testCrawlDelay(t, tt.pages, tt.delay) })
	}
}

func testCrawlDelay(t *testing.T, pages int, delay time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		html := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			for i := range pages {
				fmt.Fprintf(w, `<a href="/page/%d">page %d</a> `, i, i)
			}
		})
		robots := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: fmt.Sprintf("User-agent: *\nCrawl-delay: %g\n", delay.Seconds()), Next: html})
		start := time.Now()
		res, err := crawl(t.Context(), "http://site.example/", "examplebot/1.0", &ratelimittest.Transport{Handler: robots}, 4)
		if err != nil || len(res.Visited) != pages+1 || len(res.Errors) != 0 {
			t.Fatalf("crawl = %d pages, errors %v, %v; want %d pages, no error", len(res.Visited), res.Errors, err, pages+1)
		}
		if took := time.Since(start); took < time.Duration(pages)*delay {
			t.Errorf("crawl took %v, want %v per page", took, delay)
		}
	})
}

// TestCrawlHostCase crawls from a URL whose host is not in lower case:
// colly compares the hosts it visits lower-cased, and refused the start
// URL itself as a forbidden domain.
func TestCrawlHostCase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		robots, _ := site(3)
		res, err := crawl(t.Context(), "http://Site.Example/", "examplebot/1.0", &ratelimittest.Transport{Handler: robots}, 4)
		if err != nil || len(res.Visited) != 4 {
			t.Errorf("crawl(http://Site.Example/) = %d pages, %v; want 4", len(res.Visited), err)
		}
	})
}

// A start URL that carries user information ("http://alice:s3cret@host/",
// basic auth for a protected site, or a token as the user name) had it
// printed in the failures the crawl reports (main prints them to stderr)
// and in the pages it lists: colly copies it into every link it resolves,
// and its error of a redirect loop quotes the URL whole. The credentials
// go in an Authorization header of the requests to the start's origin
// now, and no URL carries them. A failure shows no query either (a signed
// link's may hold a secret), nor does an invalid start URL's error.
func TestCrawlHidesCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r) // unavailable: every path allowed
			return
		}
		if u, _, ok := r.BasicAuth(); !ok || u == "" {
			http.Error(w, "no credentials", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<html><body><a href="/missing">gone</a> <a href="/loop">loop</a></body></html>`)
		case "/loop", "/a":
			http.Redirect(w, r, "/a", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct{ userinfo, secret, path string }{
		{"alice:s3cret@", "s3cret", "/"},
		{"ghp_t0kenvalue:x-oauth-basic@", "ghp_t0kenvalue", "/"},
		{"alice:s3cret@", "s3cret", "/loop"}, // a redirect loop at the start
		{"alice:s3cret@", "s3cretq", "/loop?access_token=s3cretq"},
	} {
		start := strings.Replace(srv.URL, "http://", "http://"+tc.userinfo, 1) + tc.path
		res, err := crawl(t.Context(), start, "examplebot/1.0", srv.Client().Transport, 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Errors) == 0 {
			t.Errorf("%s: no failure reported (/missing is 404, /loop a loop)", tc.path)
		}
		for _, e := range res.Errors {
			if strings.Contains(e.Error(), tc.secret) || strings.Contains(e.Error(), "401") {
				t.Errorf("%s: reported failure %q (shows %q, or was sent without credentials)", tc.path, e, tc.secret)
			}
		}
		if tc.path == "/" && len(res.Visited) != 1 {
			t.Errorf("%s: visited %q, want the start page, fetched with its credentials", tc.path, res.Visited)
		}
		for _, v := range res.Visited {
			if strings.Contains(v, tc.userinfo) {
				t.Errorf("%s: a page visited shows the start URL's credentials: %s", tc.path, v)
			}
		}
	}
	_, err := crawl(t.Context(), "http://alice:50%off@127.0.0.1:1/", "examplebot/1.0", newBase(), 4)
	if err == nil || strings.Contains(err.Error(), "50%off") {
		t.Errorf("start URL url.Parse rejects: error %v, want one that does not show it", err)
	}
}

// authSite serves a site behind basic auth: "/" links to three pages.
func authSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
			http.Error(w, "no credentials", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/" {
			for i := range 3 {
				fmt.Fprintf(w, `<a href="/page/%d">page %d</a> `, i, i)
			}
		}
	})
}

// The start URL's credentials went in an Authorization header only when
// colly's request URL had the start's scheme and its host as written;
// colly normalises the URLs it visits (host lower-cased, a default port
// dropped, a Unicode host in punycode), so a start URL not written so sent
// no credentials at all: every page, the start page too, failed with a
// 401. They go to the host and port in normal form, over https too (an
// upgrade from http).
func TestCrawlCredentialsNormalisedHost(t *testing.T) {
	for _, start := range []string{
		"http://alice:s3cret@Site.Example/",
		"http://alice:s3cret@site.example:80/",
		"https://alice:s3cret@site.example:443/",
	} {
		t.Run(start, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				res, err := crawl(t.Context(), start, "examplebot/1.0", &ratelimittest.Transport{Handler: authSite()}, 4)
				if err != nil || len(res.Errors) != 0 || len(res.Visited) != 4 {
					t.Errorf("crawl(%s) = %d pages %q, errors %v, %v; want 4 pages, no error", start, len(res.Visited), res.Visited, res.Errors, err)
				}
			})
		})
	}
}

// A redirect from the https start to the same host over plain http kept
// the Authorization header colly was told to set: net/http copies it to a
// redirect to the same host name whatever the scheme, and colly dropped it
// only when the host changed; the password went out in clear text. It is
// set for each request sent, over https only when the start was.
func TestCrawlCredentialsNotDowngraded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var leaked []string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(w, r)
				return
			}
			if r.TLS == nil && r.Header.Get("Authorization") != "" { // over plain http
				mu.Lock()
				leaked = append(leaked, "http://"+r.Host+r.URL.RequestURI()+" Authorization: "+r.Header.Get("Authorization"))
				mu.Unlock()
			}
			if r.TLS != nil && r.URL.Path == "/" {
				http.Redirect(w, r, "http://site.example/page", http.StatusFound)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<html></html>")
		})
		if _, err := crawl(t.Context(), "https://alice:s3cret@site.example/", "examplebot/1.0", &ratelimittest.Transport{Handler: h}, 4); err != nil {
			t.Fatal(err)
		}
		if len(leaked) != 0 {
			t.Errorf("the start URL's credentials were sent over plain http after a redirect: %s", strings.Join(leaked, "; "))
		}
	})
}

// A site that protects every path protects its robots.txt too. polite
// fetches robots.txt through its Base, under a wrapper of the Transport:
// the credentials went on the crawl's own requests alone, robots.txt
// answered 401 (unavailable: every path allowed), and the page it
// disallows was fetched. They are sent below the Transport.
func TestCrawlCredentialsReachRobots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var private []string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
				http.Error(w, "no credentials", http.StatusUnauthorized)
				return
			}
			switch {
			case r.URL.Path == "/robots.txt":
				io.WriteString(w, "User-agent: *\nDisallow: /private\n")
				return
			case strings.HasPrefix(r.URL.Path, "/private"):
				mu.Lock()
				private = append(private, r.URL.Path)
				mu.Unlock()
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			if r.URL.Path == "/" {
				io.WriteString(w, `<a href="/page">page</a> <a href="/private/secret">private</a>`)
			}
		})
		res, err := crawl(t.Context(), "http://alice:s3cret@site.example/", "examplebot/1.0", &ratelimittest.Transport{Handler: h}, 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(private) != 0 || res.Disallowed != 1 || len(res.Visited) != 2 {
			t.Errorf("robots.txt behind basic auth disallows /private: fetched %q, visited %q, %d not sent; want 2 visited, 1 not sent", private, res.Visited, res.Disallowed)
		}
	})
}

// Two crawls over one base, each with its own credentials: the second
// sends its own alone (each crawl has a polite Transport of its own over
// base, the credentials below it).
func TestCrawlCredentialsOfEachCrawl(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		users := map[string]int{}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, _, _ := r.BasicAuth()
			mu.Lock()
			users[u]++
			mu.Unlock()
			if r.URL.Path == "/robots.txt" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<html></html>")
		})
		base := &ratelimittest.Transport{Handler: h}
		for _, start := range []string{"https://alice:s3cret@site.example/", "https://bob:hunter2@site.example/other"} {
			clear(users)
			if _, err := crawl(t.Context(), start, "examplebot/1.0", base, 4); err != nil {
				t.Fatal(err)
			}
		}
		if users["alice"] != 0 || users["bob"] != 2 {
			t.Errorf("the second crawl, started as bob, sent %v; want bob's credentials alone, on robots.txt and the page", users)
		}
	})
}
