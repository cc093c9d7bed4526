package polite

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// recheckArrival is a request that reached the origin, and when.
type recheckArrival struct {
	at   time.Duration
	path string
}

// recheckSite serves a.example: its first robots.txt is first, every later
// one answers later (a status and a body); /page is refused with 503 and
// Retry-After: 120, and every other path answers 200. It records every
// request that reaches it.
func recheckSite(start time.Time, first string, laterStatus int, laterBody string) (http.RoundTripper, func() []recheckArrival) {
	var (
		mu       sync.Mutex
		arrivals []recheckArrival
		fetches  int
	)
	base := robotsRT(func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		arrivals = append(arrivals, recheckArrival{time.Since(start), req.URL.Path})
		resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}
		switch req.URL.Path {
		case "/robots.txt":
			fetches++
			body := first
			if fetches > 1 {
				resp.StatusCode, body = laterStatus, laterBody
			}
			resp.Body = io.NopCloser(strings.NewReader(body))
		case "/page":
			resp.StatusCode = http.StatusServiceUnavailable
			resp.Header.Set("Retry-After", "120")
		}
		return resp, nil
	})
	return base, func() []recheckArrival {
		mu.Lock()
		defer mu.Unlock()
		return append([]recheckArrival(nil), arrivals...)
	}
}

// sentAfter lists the requests for path (any but robots.txt if empty) that
// reached the origin after at and before until (zero: ever).
func sentAfter(arrivals []recheckArrival, path string, at time.Duration, until time.Duration) []string {
	var sent []string
	for _, a := range arrivals {
		if a.at > at && (until == 0 || a.at < until) && a.path != "/robots.txt" && (path == "" || a.path == path) {
			sent = append(sent, a.path+" at "+a.at.String())
		}
	}
	return sent
}

// robots.txt was decided once a RoundTrip, before its first attempt: the
// retries of a request refused 5 minutes before its robots.txt expired
// (503, Retry-After: 120) went on by the verdict of the expired file,
// while the file fetched again 30 s after it expired answered 5xx (every
// path disallowed until fetched again) or disallowed the retried path:
// /page was sent at 24h1m and after, while every new request to the
// origin failed with a RobotsError.
func TestRobotsRecheckedForRetry(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		body   string
	}{
		{"unreachable", http.StatusServiceUnavailable, ""},
		{"disallowed", http.StatusOK, "User-agent: *\nDisallow: /page\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				base, arrivals := recheckSite(start, "User-agent: *\nAllow: /\n", c.status, c.body)
				tr := &Transport{Base: base, Robots: &Robots{UserAgent: "mybot"}}
				get := func(path string) error { return recheckGet(t.Context(), tr, "http://a.example"+path) }
				if err := get("/first"); err != nil {
					t.Fatal(err)
				}
				time.Sleep(robotsMaxAge - 5*time.Minute)
				done := make(chan error, 1)
				go func() { done <- get("/page") }() // refused, retried
				time.Sleep(5*time.Minute + 30*time.Second)
				refetched := time.Since(start)
				err := get("/other")
				pageErr := <-done
				var re *RobotsError
				switch c.status {
				case http.StatusOK:
					if err != nil {
						t.Fatalf("the request at %v: %v, want it allowed", refetched, err)
					}
				default:
					if !errors.As(err, &re) || !re.Unreachable {
						t.Fatalf("the request at %v: %v, want robots.txt unreachable", refetched, err)
					}
				}
				if sent := sentAfter(arrivals(), "/page", refetched, 0); len(sent) > 0 {
					t.Errorf("robots.txt fetched again at %v (%d), yet /page was sent %v", refetched, c.status, sent)
				}
				if !errors.As(pageErr, &re) {
					t.Errorf("the retried request: %v, want a *RobotsError", pageErr)
				}
			})
		})
	}
}

// A request held by pacing past the expiry of the robots.txt it was
// decided by is decided again before it goes: Crawl-delay of 10 minutes,
// two requests at 23h55m, the second held until 24h5m; the file fetched
// again at 24h disallows its path.
func TestRobotsRecheckedAfterLongWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		base, arrivals := recheckSite(start, "User-agent: *\nCrawl-delay: 600\n", http.StatusOK, "User-agent: *\nCrawl-delay: 600\nDisallow: /held\n")
		var mu sync.Mutex
		var gaveUp []Event
		tr := &Transport{Base: base, Robots: &Robots{UserAgent: "mybot"}, MaxWait: time.Hour, OnEvent: func(e Event) {
			if e.Kind == EventGiveUp {
				mu.Lock()
				gaveUp = append(gaveUp, e)
				mu.Unlock()
			}
		}}
		get := func(path string) error { return recheckGet(t.Context(), tr, "http://a.example"+path) }
		if err := get("/first"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(robotsMaxAge - 5*time.Minute)
		if err := get("/now"); err != nil {
			t.Fatal(err)
		}
		err := get("/held")
		var re *RobotsError
		if !errors.As(err, &re) || re.Unreachable {
			t.Errorf("the held request, at %v: %v, want disallowed by the file fetched again", time.Since(start), err)
		}
		mu.Lock()
		if len(gaveUp) != 1 || !errors.As(gaveUp[0].Err, &re) || gaveUp[0].Status != 0 || gaveUp[0].Attempt != 1 {
			t.Errorf("give-up events %+v, want one of attempt 1 with the *RobotsError and Status 0", gaveUp)
		}
		mu.Unlock()
		if sent := sentAfter(arrivals(), "/held", 0, 0); len(sent) > 0 {
			t.Errorf("/held was sent %v though the file in force then disallows it", sent)
		}
		// A request allowed still goes, paced by the floor.
		at := time.Now()
		if err := get("/allowed"); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(at); d > 10*time.Minute {
			t.Errorf("a request allowed waited %v", d)
		}
		// (The grant of the request refused ends unsent: the budget takes
		// its start back, the Crawl-delay floor keeps it, so the next
		// waits up to one interval.)
	})
}

// A request decided again asks anew in its place in line: held by a
// Crawl-delay of 10 minutes, the one whose wait outlasted the robots.txt
// it was decided by still goes before the one that asked after it.
func TestRobotsRecheckKeepsPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		const file = "User-agent: *\nCrawl-delay: 600\n"
		base, arrivals := recheckSite(start, file, http.StatusOK, file)
		tr := &Transport{Base: base, Robots: &Robots{UserAgent: "mybot"}, MaxWait: time.Hour}
		get := func(path string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.example"+path, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return
			}
			resp.Body.Close()
		}
		get("/first")
		time.Sleep(robotsMaxAge - 15*time.Minute)
		get("/now") // at 23h45m
		var wg sync.WaitGroup
		wg.Go(func() { get("/b") }) // held until 23h55m
		synctest.Wait()
		time.Sleep(time.Second)
		wg.Go(func() { get("/c") }) // held until 24h5m, past the file's end
		synctest.Wait()
		time.Sleep(time.Second)
		wg.Go(func() { get("/d") }) // asked last
		wg.Wait()
		var order []string
		for _, a := range arrivals() {
			if a.path != "/robots.txt" {
				order = append(order, a.path)
			}
		}
		if got, want := strings.Join(order, " "), "/first /now /b /c /d"; got != want {
			t.Errorf("sent in the order %s, want %s", got, want)
		}
	})
}

// A request held by the pace past its robots.txt verdict was granted, then
// rechecked holding its grant, for the 3 s of a slow fetch. The pace
// counted its start from the grant: a request that asked during the fetch
// (and waited for it) found its turn come an interval after that grant,
// and both were sent at the fetch's end, under a MaxRate of 1, a
// Budget.MaxRate of 1 or a Crawl-delay of 1. It is decided again before
// its grant, its place in line kept.
func TestRobotsRecheckCountsPaceFromSend(t *testing.T) {
	for _, mode := range []string{"MaxRate", "Crawl-delay", "Budget.MaxRate"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var (
					mu    sync.Mutex
					pages []time.Duration
				)
				robots := "User-agent: *\nAllow: /\n"
				if mode == "Crawl-delay" {
					robots += "Crawl-delay: 1\n"
				}
				base := &ratelimittest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/robots.txt" {
						time.Sleep(3 * time.Second) // a slow robots.txt
						io.WriteString(w, robots)
						return
					}
					mu.Lock()
					pages = append(pages, time.Since(start))
					mu.Unlock()
				})}
				tr := &Transport{Base: base, Robots: &Robots{UserAgent: "bot"}, MaxWait: time.Minute}
				switch mode {
				case "MaxRate":
					tr.MaxRate = 1
				case "Budget.MaxRate":
					tr.Budget = &Budget{MaxRate: 1}
				}
				get := func() {
					req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://site.test/page", nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				}
				get() // robots.txt fetched from 0 to 3s, the page sent at 3s
				time.Sleep(24*time.Hour - 2*time.Second)
				get() // at 24h+1s; the next start at 24h+2s
				var wg sync.WaitGroup
				time.Sleep(500 * time.Millisecond)
				wg.Go(get) // asks at 24h+1.5s, held to 24h+2s
				time.Sleep(500 * time.Millisecond)
				wg.Go(get) // asks at 24h+2s, held to 24h+3s: past the file's end, rechecked (3s)
				time.Sleep(1600 * time.Millisecond)
				wg.Go(get) // asks at 24h+3.6s, waits for the fetch under way
				wg.Wait()
				mu.Lock()
				defer mu.Unlock()
				for i := 1; i < len(pages); i++ {
					if d := pages[i] - pages[i-1]; d < time.Second {
						t.Errorf("pages sent at %v: the %dth and %dth %v apart, want 1s at least under %s 1/s", pages, i, i+1, d, mode)
					}
				}
			})
		})
	}
}

// A request refused (503, Retry-After: 120) waits for its retry;
// meanwhile its origin's robots.txt leaves the cache (MaxOrigins) and is
// fetched again by another request, and the file in force now disallows
// the request's path, by a rule or as an unreachable origin's. The retry
// was sent by the file read before, kept until its 24 hours' end, while
// every new request for the path failed. A verdict is judged again once
// a fetch ended since it was made.
func TestRobotsRetryDecidedByFileReplaced(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		body   string
	}{
		{"disallowed", http.StatusOK, "User-agent: *\nDisallow: /page\n"},
		{"unreachable", http.StatusServiceUnavailable, ""},
	} {
		t.Run(c.name, func(t *testing.T) { retryAfterEviction(t, c.status, c.body) })
	}
}

func retryAfterEviction(t *testing.T, status int, body string) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		base, arrivals := recheckSite(start, "User-agent: *\nAllow: /\n", status, body)
		tr := &Transport{Base: base, Robots: &Robots{UserAgent: "mybot", MaxOrigins: 1}}
		if err := recheckGet(t.Context(), tr, "http://a.example/first"); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- recheckGet(t.Context(), tr, "http://a.example/page") }() // 503, retried at 120s
		time.Sleep(10 * time.Second)
		// Another origin takes a.example's place in the cache.
		tr.Robots.check(t.Context(), base, robotsReq(t, t.Context(), "http://b.example/x"))
		time.Sleep(10 * time.Second)
		// a.example's robots.txt fetched again: /page is disallowed now
		// (by a rule, or as every path of an unreachable origin).
		refetched := time.Since(start)
		_, err := tr.Robots.check(t.Context(), base, robotsReq(t, t.Context(), "http://a.example/page"))
		var re *RobotsError
		if !errors.As(err, &re) {
			t.Fatalf("a new request for /page at %v: %v, want a *RobotsError (the file in force disallows it)", refetched, err)
		}
		pageErr := <-done
		if sent := sentAfter(arrivals(), "/page", refetched, 0); len(sent) > 0 {
			t.Errorf("robots.txt of a.example fetched again at %v disallows /page, yet the retry was sent %v (RoundTrip: %v)", refetched, sent, pageErr)
		}
	})
}

// A first attempt held by the pace to MaxWait's limit exactly, while its
// origin's robots.txt was forgotten (MaxOrigins 1) and fetched again, now
// disallowing its path: woken at the limit, it is not decided again in
// hold, and the check after its grant judged a first attempt by its
// file's expiry alone. It was sent by the file replaced; an attempt that
// waited is judged as a retry is.
func TestRobotsHeldToLimitDecidedByFileReplaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		base, arrivals := recheckSite(start, "User-agent: *\nAllow: /\n", 200, "User-agent: *\nDisallow: /page\n")
		tr := &Transport{Base: base, Robots: &Robots{UserAgent: "mybot", MaxOrigins: 1}, MaxRate: 1.0 / 60, MaxWait: time.Minute}
		if err := recheckGet(t.Context(), tr, "http://a.example/first"); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- recheckGet(t.Context(), tr, "http://a.example/page") }() // held by the pace until 60 s, its limit
		time.Sleep(10 * time.Second)
		tr.Robots.check(t.Context(), base, robotsReq(t, t.Context(), "http://b.example/x")) // evicts a.example
		time.Sleep(10 * time.Second)
		refetched := time.Since(start)
		if _, err := tr.Robots.check(t.Context(), base, robotsReq(t, t.Context(), "http://a.example/page")); !errors.As(err, new(*RobotsError)) {
			t.Fatalf("a new request for /page: %v, want a *RobotsError", err)
		}
		err := <-done
		if sent := sentAfter(arrivals(), "/page", refetched, 0); len(sent) > 0 {
			t.Errorf("robots.txt of a.example fetched again at %v disallows /page, yet the held first attempt was sent %v (RoundTrip: %v)", refetched, sent, err)
		}
	})
}

// An origin whose robots.txt was fetched and found unavailable (404) has
// no Crawl-delay, known: a request for /robots.txt itself through a
// Transport that read a Crawl-delay of 10 before (two Transports share
// the Robots; the other fetched the file again) lifts that floor, as the
// interval of a file fetched; only an origin not fetched (or forgotten)
// leaves it.
func TestRobotsTxtRequestUnavailableFileNoFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		base, _ := recheckSite(start, "User-agent: *\nCrawl-delay: 10\n", 404, "")
		r := &Robots{UserAgent: "mybot"}
		t1 := &Transport{Base: base, Robots: r}
		t2 := &Transport{Base: base, Robots: r}
		if err := recheckGet(t.Context(), t2, "http://a.example/x"); err != nil { // fetch 1: Crawl-delay 10
			t.Fatal(err)
		}
		time.Sleep(robotsMaxAge + time.Minute)
		if err := recheckGet(t.Context(), t1, "http://a.example/y"); err != nil { // fetch 2: 404, no Crawl-delay
			t.Fatal(err)
		}
		if d, _ := r.check(t.Context(), base, robotsReq(t, t.Context(), "http://a.example/z")); d != 0 {
			t.Fatalf("interval now %v, want 0", d)
		}
		if err := recheckGet(t.Context(), t2, "http://a.example/robots.txt"); err != nil {
			t.Fatal(err)
		}
		asked := time.Now()
		if err := recheckGet(t.Context(), t2, "http://a.example/robots.txt"); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(asked); waited > 0 {
			t.Errorf("T2's second request for /robots.txt waited %v: the origin's robots.txt in force is unavailable (no Crawl-delay), yet the 10 s floor of the file replaced stays", waited)
		}
	})
}

// An origin found unreachable (5xx) whose file was forgotten before, or
// never read, has no Crawl-delay known: a request for /robots.txt itself
// leaves the floor the Transport keeps, as for an origin not fetched. (A
// 404's none is known.)
func TestRobotsTxtRequestUnreachableFloorKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var down atomic.Bool // robots.txt answers 503 while set
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}
			if req.URL.Path == "/robots.txt" {
				if down.Load() {
					resp.StatusCode = http.StatusServiceUnavailable
				} else {
					resp.Body = io.NopCloser(strings.NewReader("User-agent: *\nCrawl-delay: 10\n"))
				}
			}
			return resp, nil
		})
		r := &Robots{UserAgent: "mybot", MaxOrigins: 1}
		tr := &Transport{Base: base, Robots: r}
		if err := recheckGet(t.Context(), tr, "http://a.example/x"); err != nil { // floor 10 s
			t.Fatal(err)
		}
		time.Sleep(time.Minute)                                                     // the floor's spacing from /x is over
		r.check(t.Context(), base, robotsReq(t, t.Context(), "http://b.example/x")) // forgets a.example
		down.Store(true)
		// a.example fetched again: 503, unreachable, no file kept.
		if _, err := r.check(t.Context(), base, robotsReq(t, t.Context(), "http://a.example/y")); err == nil {
			t.Fatal("a.example's robots.txt should be unreachable now")
		}
		down.Store(false)
		key := robotsSite{origin: "http://a.example"}.key()
		if d, ok := r.robotsCache().shard(key).interval(key); ok {
			t.Errorf("interval of an unreachable robots.txt whose file was forgotten: %v, known; want unknown", d)
		}
		if err := recheckGet(t.Context(), tr, "http://a.example/robots.txt"); err != nil {
			t.Fatal(err)
		}
		asked := time.Now()
		if err := recheckGet(t.Context(), tr, "http://a.example/robots.txt"); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(asked); waited < 10*time.Second {
			t.Errorf("second request for /robots.txt waited %v, want 10s: robots.txt is unreachable (Crawl-delay unknown), yet the 10 s floor was lifted", waited)
		}
	})
}

// A first attempt granted at its first try, never held, is not decided
// again after its grant, whatever fetches of robots.txt ended since its
// verdict (its own among them): every attempt goes through hold under a
// local ceiling, and one that went through it was taken for held.
func TestRobotsFirstAttemptNotHeldNotRedecided(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := &recheckOrigin{start: time.Now(), robots: func(int) (int, string) { return http.StatusOK, "User-agent: *\nAllow: /\n" }}
		r := &Robots{UserAgent: "mybot", MaxOrigins: 1}
		tr := &Transport{
			Base:    site,
			Robots:  r,
			MaxRate: 100, // a local ceiling that holds no lone request
			Cost: func(*http.Request) Cost { // a slow estimate, between the verdict and the first try
				time.Sleep(time.Second)
				return Cost{}
			},
		}
		var waits int
		tr.OnEvent = func(e Event) {
			if e.Kind == EventWait {
				waits++
			}
		}
		done := make(chan error, 1)
		go func() { done <- recheckGet(t.Context(), tr, "http://a.example/x") }()
		time.Sleep(500 * time.Millisecond)
		r.check(t.Context(), site, robotsReq(t, t.Context(), "http://b.example/x")) // another origin's fetch ends; a.example forgotten
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// site serves both hosts: 1 fetch for a.example, 1 for b.example.
		if n := site.robotsFetches(); n != 2 || waits != 0 {
			t.Errorf("robots.txt fetched %d times (want 2: once per origin), %d waits reported: a first attempt never held was decided again after its grant", n, waits)
		}
	})
}

// A 404, then a 503: the origin is unreachable, and the last answer read
// asked no Crawl-delay, known still; a request for /robots.txt lifts the
// floor of a file read before, as after the 404 alone.
func TestRobotsTxtRequestUnavailableThenUnreachableNoFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The Robots cache's fetches carry its User-Agent ("mybot"); the
		// Transport's own requests for /robots.txt carry none and are
		// answered 200, so that they pause nothing.
		var fetches int
		site := robotsRT(func(req *http.Request) (*http.Response, error) {
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}
			if req.URL.Path == "/robots.txt" && req.Header.Get("User-Agent") != "" {
				fetches++
				switch fetches {
				case 1:
					resp.Body = io.NopCloser(strings.NewReader("User-agent: *\nCrawl-delay: 10\n"))
				case 2:
					resp.StatusCode = http.StatusNotFound
				default:
					resp.StatusCode = http.StatusServiceUnavailable
				}
			}
			return resp, nil
		})
		r := &Robots{UserAgent: "mybot"}
		t1 := &Transport{Base: site, Robots: r}
		t2 := &Transport{Base: site, Robots: r}
		if err := recheckGet(t.Context(), t2, "http://a.example/x"); err != nil { // fetch 1: Crawl-delay 10, T2's floor
			t.Fatal(err)
		}
		time.Sleep(robotsMaxAge + time.Minute)
		if err := recheckGet(t.Context(), t1, "http://a.example/y"); err != nil { // fetch 2: 404, no Crawl-delay
			t.Fatal(err)
		}
		time.Sleep(robotsMaxAge + time.Minute)
		if _, err := r.check(t.Context(), site, robotsReq(t, t.Context(), "http://a.example/z")); err == nil { // fetch 3: 503
			t.Fatal("a.example's robots.txt should be unreachable now")
		}
		key := robotsSite{origin: "http://a.example"}.key()
		d, ok := r.robotsCache().shard(key).interval(key)
		if err := recheckGet(t.Context(), t2, "http://a.example/robots.txt"); err != nil {
			t.Fatal(err)
		}
		asked := time.Now()
		if err := recheckGet(t.Context(), t2, "http://a.example/robots.txt"); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(asked); waited > 0 || !ok {
			t.Errorf("interval %v (known %v); T2's second /robots.txt waited %v, want 0: the last file read (404) asked no Crawl-delay, yet the 10 s floor of the file it replaced stays once the origin is unreachable", d, ok, waited)
		}
	})
}

// Under CrawlDelayOnly, an origin found unreachable whose file was
// forgotten has no Crawl-delay known: an ordinary request set its floor
// to zero, and requests went back to back while the server failed; the
// floor kept stays.
func TestRobotsDelayOnlyUnreachableForgottenFloorKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var down atomic.Bool // robots.txt answers 503 while set
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}
			if req.URL.Path == "/robots.txt" {
				if down.Load() {
					resp.StatusCode = http.StatusServiceUnavailable
				} else {
					resp.Body = io.NopCloser(strings.NewReader("User-agent: *\nCrawl-delay: 10\n"))
				}
			}
			return resp, nil
		})
		r := &Robots{UserAgent: "mybot", MaxOrigins: 1, CrawlDelayOnly: true}
		tr := &Transport{Base: base, Robots: r}
		if err := recheckGet(t.Context(), tr, "http://a.example/x"); err != nil { // floor 10 s
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		r.check(t.Context(), base, robotsReq(t, t.Context(), "http://b.example/x")) // forgets a.example
		down.Store(true)
		if err := recheckGet(t.Context(), tr, "http://a.example/y"); err != nil { // fetches a.example again: 503
			t.Fatal(err)
		}
		key := robotsSite{origin: "http://a.example"}.key()
		_, known := r.robotsCache().shard(key).interval(key)
		asked := time.Now()
		if err := recheckGet(t.Context(), tr, "http://a.example/z"); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(asked); waited < 10*time.Second {
			t.Errorf("/z waited %v after /y, want 10s: robots.txt unreachable and its file forgotten (interval known: %v), yet an ordinary request set the floor to 0", waited, known)
		}
	})
}
