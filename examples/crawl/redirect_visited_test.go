package main

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite/ratelimittest"
)

// TestRedirectToVisitedPageIsNoError crawls a site whose start page
// links to /b and to /a, and /a redirects to /b (as "/docs" to "/docs/"):
// every page is fetched, and the crawl should report no error. colly
// refuses to follow a redirect to a URL it has visited, and that refusal
// reaches OnError, which counts it as a failure: the command prints it and
// exits 1 ("a page could not be fetched"), though /b was fetched.
func TestRedirectToVisitedPageIsNoError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		html := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/a":
				http.Redirect(w, r, "/b", http.StatusMovedPermanently)
				return
			case "/c":
				http.Redirect(w, r, "http://elsewhere.example/x", http.StatusFound)
				return
			case "/":
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, `<html><body><a href="/b">b</a> <a href="/a">a</a> <a href="/c">c</a></body></html>`)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><body>leaf</body></html>`)
		})
		robots := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nAllow: /\n", Next: html})
		res, err := crawl(t.Context(), "http://site.example/", "examplebot/1.0", &ratelimittest.Transport{Handler: robots}, 4)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("visited %v", res.Visited)
		if len(res.Errors) != 0 {
			t.Errorf("crawl reported %d errors for a site whose every page was fetched (a redirect to a page already visited): %v", len(res.Errors), res.Errors)
		}
	})
}

// The start page redirecting to another host (example.com to
// www.example.com) is a failure: nothing is crawled, and the command
// exits 1 saying why.
func TestStartRedirectedElsewhereIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		away := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://www.site.example/", http.StatusMovedPermanently)
		})
		robots := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nAllow: /\n", Next: away})
		res, err := crawl(t.Context(), "http://site.example/", "examplebot/1.0", &ratelimittest.Transport{Handler: robots}, 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Visited) != 0 || len(res.Errors) != 1 {
			t.Errorf("visited %v, errors %v; want nothing visited and the start page's redirect as the error", res.Visited, res.Errors)
		}
	})
}
