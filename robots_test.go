package polite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// robotsRT adapts a function to http.RoundTripper.
type robotsRT func(*http.Request) (*http.Response, error)

func (f robotsRT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// robotsReq returns a GET of url with ctx.
func robotsReq(t *testing.T, ctx context.Context, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// robotsBase returns an in-memory base serving h for every host.
func robotsBase(h http.Handler) http.RoundTripper { return &ratelimittest.Transport{Handler: h} }

func TestRobotsDisallow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{
			Body: "User-agent: *\nDisallow: /\n\nUser-agent: mybot\nDisallow: /private/\nAllow: /private/ok\nCrawl-delay: 0.5\n",
		})
		base := robotsBase(h)
		r := &Robots{UserAgent: "MyBot/1.0 (+https://mybot.example)"}
		tests := []struct {
			url     string
			allowed bool
			rule    string
		}{
			{"http://a.example/", true, ""},
			{"http://a.example/private/x?q=1", false, "/private/"},
			{"http://a.example/private/ok", true, ""},
			{"http://a.example/robots.txt", true, ""},
			{"ftp://a.example/private/", true, ""}, // not http
		}
		for _, tt := range tests {
			interval, err := r.check(t.Context(), base, robotsReq(t, t.Context(), tt.url))
			if tt.allowed {
				if err != nil {
					t.Errorf("check(%s) = %v, want allowed", tt.url, err)
				}
				continue
			}
			var rerr *RobotsError
			if !errors.As(err, &rerr) || !errors.Is(err, ErrDisallowed) {
				t.Fatalf("check(%s) = %v, want a *RobotsError matching ErrDisallowed", tt.url, err)
			}
			if rerr.Rule != tt.rule || rerr.Agent != "mybot" || rerr.Origin != "http://a.example" || rerr.Unreachable {
				t.Errorf("check(%s) = %+v, want rule %q of group mybot", tt.url, rerr, tt.rule)
			}
			if strings.Contains(err.Error(), "q=1") {
				t.Errorf("error %q shows the query", err)
			}
			if interval != 500*time.Millisecond {
				t.Errorf("check(%s) interval = %v, want 500ms", tt.url, interval)
			}
		}
		if got := h.Stats().Fetches; got != 1 {
			t.Errorf("robots.txt fetched %d times, want once", got)
		}
		if got := h.Stats().Requests; got != 0 {
			t.Errorf("check sent %d other requests, want none", got)
		}
	})
}

func TestRobotsCrawlDelayOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nDisallow: /\nRequest-rate: 1/5s\n"})
		r := &Robots{CrawlDelayOnly: true}
		interval, err := r.check(t.Context(), robotsBase(h), robotsReq(t, t.Context(), "https://a.example/x"))
		if err != nil || interval != 5*time.Second {
			t.Errorf("check = %v, %v; want 5s, nil", interval, err)
		}
		// Unreachable: still not refused, with the interval it had.
		h.Set(ratelimittest.RobotsConfig{Status: 503})
		time.Sleep(25 * time.Hour)
		interval, err = r.check(t.Context(), robotsBase(h), robotsReq(t, t.Context(), "https://a.example/x"))
		if err != nil || interval != 5*time.Second {
			t.Errorf("check while unreachable = %v, %v; want 5s, nil", interval, err)
		}
		if got := h.Stats().Fetches; got != 2 {
			t.Errorf("%d fetches, want 2", got)
		}
	})
}

func TestRobotsStatus(t *testing.T) {
	for _, tt := range []struct {
		status      int
		unreachable bool
	}{
		{200, false}, {204, false}, {400, false}, {401, false}, {403, false}, {404, false}, {410, false},
		{429, true}, {500, true}, {502, true}, {503, true}, {504, true},
		{304, false}, // a status that says nothing: unavailable
	} {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Status: tt.status, Body: "User-agent: *\nAllow: /\n"})
				r := &Robots{}
				_, err := r.check(t.Context(), robotsBase(h), robotsReq(t, t.Context(), "http://a.example/page"))
				var rerr *RobotsError
				if got := errors.As(err, &rerr) && rerr.Unreachable; got != tt.unreachable {
					t.Fatalf("status %d: check = %v, want unreachable %v", tt.status, err, tt.unreachable)
				}
				if tt.unreachable && (rerr.Status != tt.status || !rerr.Until.Equal(time.Now().Add(time.Minute))) {
					t.Errorf("status %d: %+v, want the status and a retry in a minute", tt.status, rerr)
				}
			})
		})
	}
}

// TestRobotsUnreachable checks RFC 9309 §2.3.1.4: while robots.txt answers
// 503, every path is disallowed and only robots.txt is requested, with
// waits doubling from a minute; once it answers, the rules apply.
func TestRobotsUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Status: 503})
		base := robotsBase(h)
		r := &Robots{UserAgent: "mybot"}
		start := time.Now()
		check := func() error {
			_, err := r.check(t.Context(), base, robotsReq(t, t.Context(), "http://a.example/page"))
			return err
		}
		var fetches []time.Duration
		for time.Since(start) < 20*time.Minute {
			err := check()
			var rerr *RobotsError
			if !errors.As(err, &rerr) || !rerr.Unreachable || !errors.Is(err, ErrDisallowed) {
				t.Fatalf("at %v: check = %v, want unreachable", time.Since(start), err)
			}
			if n := h.Stats().Fetches; n > len(fetches) {
				fetches = append(fetches, time.Since(start))
			}
			time.Sleep(10 * time.Second)
		}
		want := []time.Duration{0, time.Minute, 3 * time.Minute, 7 * time.Minute, 15 * time.Minute}
		if fmt.Sprint(fetches) != fmt.Sprint(want) {
			t.Errorf("robots.txt fetched at %v, want %v", fetches, want)
		}
		if n := h.Stats().Requests; n != 0 {
			t.Errorf("%d requests other than robots.txt, want 0", n)
		}

		h.Set(ratelimittest.RobotsConfig{Status: 404})
		time.Sleep(time.Until(start.Add(31 * time.Minute)))
		if err := check(); err != nil {
			t.Errorf("after robots.txt answered 404: check = %v, want allowed", err)
		}
	})
}

func TestRobotsUnreachableRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Status: 503, RetryAfter: 2 * time.Hour})
		r := &Robots{}
		_, err := r.check(t.Context(), robotsBase(h), robotsReq(t, t.Context(), "http://a.example/page"))
		var rerr *RobotsError
		if !errors.As(err, &rerr) || !rerr.Until.Equal(time.Now().Add(2*time.Hour)) {
			t.Fatalf("check = %v, want unreachable until Retry-After", err)
		}
	})
}

func TestRobotsNetworkError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("connection refused")
		base := robotsRT(func(*http.Request) (*http.Response, error) { return nil, boom })
		r := &Robots{}
		_, err := r.check(t.Context(), base, robotsReq(t, t.Context(), "http://a.example/page"))
		var rerr *RobotsError
		if !errors.As(err, &rerr) || !rerr.Unreachable || rerr.Status != 0 || !errors.Is(err, boom) || !errors.Is(err, ErrDisallowed) {
			t.Errorf("check = %v, want unreachable, wrapping the transport error", err)
		}
	})
}

func TestRobotsSlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Delay: time.Hour})
		r := &Robots{}
		start := time.Now()
		_, err := r.check(t.Context(), robotsBase(h), robotsReq(t, t.Context(), "http://a.example/page"))
		var rerr *RobotsError
		if !errors.As(err, &rerr) || !rerr.Unreachable || !errors.Is(err, errRobotsTimeout) {
			t.Fatalf("check = %v, want unreachable after the fetch timed out", err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("check = %v matches context.DeadlineExceeded; the request's context has no deadline", err)
		}
		if d := time.Since(start); d != robotsFetchTimeout {
			t.Errorf("gave up after %v, want %v", d, robotsFetchTimeout)
		}
	})
}

// A robots.txt whose body never comes, from a Base whose bodies ignore
// the context, still times out with the fetch; one whose Body is nil is
// read as empty, and a redirect's or an error's as nothing to drain.
func TestRobotsBaseBodies(t *testing.T) {
	for _, tt := range []struct {
		name    string
		status  int
		body    func() io.ReadCloser
		timeout bool
	}{
		{"200, body stuck", 200, func() io.ReadCloser { return NewStuckBody() }, true},
		{"500, body stuck", 500, func() io.ReadCloser { return NewStuckBody() }, false},
		{"200, nil body", 200, func() io.ReadCloser { return nil }, false},
		{"301, nil body", 301, func() io.ReadCloser { return nil }, false},
		{"503, nil body", 503, func() io.ReadCloser { return nil }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := robotsRT(func(r *http.Request) (*http.Response, error) {
					h := http.Header{"Location": {"/elsewhere"}}
					return &http.Response{StatusCode: tt.status, Header: h, Body: tt.body(), Request: r}, nil
				})
				r := &Robots{}
				start := time.Now()
				_, err := r.check(t.Context(), base, robotsReq(t, t.Context(), "http://a.example/page"))
				d := time.Since(start)
				if tt.timeout && (!errors.Is(err, errRobotsTimeout) || d != robotsFetchTimeout) {
					t.Errorf("check = %v after %v, want the fetch timed out after %v", err, d, robotsFetchTimeout)
				}
				if !tt.timeout && d > drainTime {
					t.Errorf("check = %v after %v, want at most %v", err, d, drainTime)
				}
			})
		})
	}
}

func TestRobotsRedirects(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cfg     ratelimittest.RobotsConfig
		allowed bool // the robots.txt behind the redirects disallows /page
		fetches int
	}{
		{"five redirects are followed", ratelimittest.RobotsConfig{Redirects: 5}, false, 6},
		{"six are too many: unavailable", ratelimittest.RobotsConfig{Redirects: 6}, true, 6},
		{"endless: unavailable", ratelimittest.RobotsConfig{Redirects: -1}, true, 6},
		{"to https on another host", ratelimittest.RobotsConfig{Redirects: 1, RedirectTo: "https://b.example/robots.txt"}, false, 1},
		{"to another scheme", ratelimittest.RobotsConfig{Redirects: 1, RedirectTo: "ftp://b.example/robots.txt"}, true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tt.cfg.Body = "User-agent: *\nDisallow: /page\n"
				h := ratelimittest.NewRobotsHandler(tt.cfg)
				b := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: tt.cfg.Body})
				mux := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					if req.Host == "b.example" {
						b.ServeHTTP(w, req)
						return
					}
					h.ServeHTTP(w, req)
				})
				r := &Robots{}
				_, err := r.check(t.Context(), robotsBase(mux), robotsReq(t, t.Context(), "http://a.example/page"))
				if allowed := err == nil; allowed != tt.allowed {
					t.Errorf("check = %v, want allowed %v", err, tt.allowed)
				}
				if got := h.Stats().Fetches; got != tt.fetches {
					t.Errorf("%d fetches, want %d", got, tt.fetches)
				}
			})
		})
	}

	// From https to http: followed, and its rules apply (see
	// TestRobotsRedirectToHTTPFollowed). This used to pass only because the
	// handler redirected the http robots.txt again, for ever.
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Redirects: 1, RedirectTo: "http://a.example/robots.txt", Body: "User-agent: *\nDisallow: /\n"})
		r := &Robots{}
		if _, err := r.check(t.Context(), robotsBase(h), robotsReq(t, t.Context(), "https://a.example/page")); !errors.Is(err, ErrDisallowed) {
			t.Errorf("https to http: check = %v, want the path disallowed", err)
		}
		if got := h.Stats().Fetches; got != 2 {
			t.Errorf("https to http: %d fetches, want 2", got)
		}
	})
}

func TestRobotsHuge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tt := range []struct {
			pad     int
			allowed bool
		}{
			{400 << 10, false},
			{600 << 10, true}, // the rule is past 512 KiB
			{50 << 20, true},
		} {
			h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Pad: tt.pad, Body: "User-agent: *\nDisallow: /\n"})
			r := &Robots{}
			_, err := r.check(t.Context(), robotsBase(h), robotsReq(t, t.Context(), "http://a.example/page"))
			if allowed := err == nil; allowed != tt.allowed {
				t.Errorf("Disallow after %d bytes: check = %v, want allowed %v", tt.pad, err, tt.allowed)
			}
		}
	})
}

// TestRobotsOncePerOrigin sends 1000 requests to 50 origins at once: each
// robots.txt is fetched once, every request waits for its origin's, and
// none is allowed before it arrived.
func TestRobotsOncePerOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Delay: time.Second, Body: "User-agent: *\nDisallow: /no\n"})
		base := robotsBase(h)
		r := &Robots{}
		start := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		refused := 0
		for i := range 1000 {
			wg.Go(func() {
				path := "/yes"
				if i%10 == 0 {
					path = "/no"
				}
				_, err := r.check(t.Context(), base, robotsReq(t, t.Context(), fmt.Sprintf("http://o%d.example%s", i%50, path)))
				if d := time.Since(start); d != time.Second {
					t.Errorf("request %d decided after %v, want when robots.txt came (1s)", i, d)
				}
				if err != nil {
					mu.Lock()
					refused++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		st := h.Stats()
		if st.Fetches != 50 || len(st.FetchesByHost) != 50 {
			t.Errorf("%d fetches of %d origins, want 50 of 50: %v", st.Fetches, len(st.FetchesByHost), st.FetchesByHost)
		}
		if refused != 100 {
			t.Errorf("%d refused, want the 100 for /no", refused)
		}

		// A day later, each is fetched again, once.
		time.Sleep(24 * time.Hour)
		for i := range 200 {
			r.check(t.Context(), base, robotsReq(t, t.Context(), fmt.Sprintf("http://o%d.example/yes", i%50)))
		}
		if got := h.Stats().Fetches; got != 100 {
			t.Errorf("%d fetches after 24 hours, want 100", got)
		}
	})
}

func TestRobotsWaiterContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Delay: 10 * time.Second})
		base := robotsBase(h)
		r := &Robots{}
		go r.check(t.Context(), base, robotsReq(t, t.Context(), "http://a.example/1"))
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		_, err := r.check(ctx, base, robotsReq(t, ctx, "http://a.example/2"))
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("waiter: check = %v after %v, want its context's error after 1s", err, time.Since(start))
		}
		time.Sleep(10 * time.Second) // the fetch ends
	})
}

// TestRobotsLeaderCanceled checks that when the request that started the
// robots.txt fetch is canceled, the fetch goes on for the requests waiting
// for it. It was abandoned, and a waiting request fetched again.
func TestRobotsLeaderCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Delay: 10 * time.Second})
		base := robotsBase(h)
		r := &Robots{}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() {
			_, err := r.check(ctx, base, robotsReq(t, ctx, "http://a.example/1"))
			done <- err
		}()
		synctest.Wait()
		waiter := make(chan error)
		go func() {
			_, err := r.check(t.Context(), base, robotsReq(t, t.Context(), "http://a.example/2"))
			waiter <- err
		}()
		time.Sleep(5 * time.Second)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("canceled leader: check = %v, want context.Canceled", err)
		}
		start := time.Now()
		if err := <-waiter; err != nil || time.Since(start) != 5*time.Second {
			t.Errorf("waiter: check = %v after %v, want allowed once the first fetch ended (5s)", err, time.Since(start))
		}
		if got := h.Stats().Fetches; got != 1 {
			t.Errorf("%d fetches, want 1", got)
		}
	})
}

func TestRobotsBasePanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &Robots{}
		panicky := robotsRT(func(*http.Request) (*http.Response, error) { panic("boom") })
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the panic of Base did not go on")
				}
			}()
			r.check(t.Context(), panicky, robotsReq(t, t.Context(), "http://a.example/1"))
		}()
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nDisallow: /\n"})
		if _, err := r.check(t.Context(), robotsBase(h), robotsReq(t, t.Context(), "http://a.example/1")); !errors.Is(err, ErrDisallowed) {
			t.Errorf("after a panic: check = %v, want a new fetch and ErrDisallowed", err)
		}
	})
}

// TestRobotsRequest checks the robots.txt request: a fresh GET with the
// caller's User-Agent and nothing else of the caller's, whose request is
// not modified.
func TestRobotsRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got *http.Request
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			got = req
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
		})
		r := &Robots{UserAgent: "mybot"}
		req := robotsReq(t, t.Context(), "http://User:Pass@A.Example.:80/x?secret=1")
		req.Header.Set("User-Agent", "mybot/2.0 (+https://mybot.example)")
		req.Header.Set("Authorization", "Bearer sk-secret")
		req.Header.Set("Cookie", "s=1")
		before := req.Clone(t.Context())
		if _, err := r.check(t.Context(), base, req); err != nil {
			t.Fatal(err)
		}
		if got.URL.String() != "http://a.example/robots.txt" || got.Method != http.MethodGet {
			t.Errorf("fetched %s %s, want GET http://a.example/robots.txt", got.Method, got.URL)
		}
		if got.Header.Get("User-Agent") != "mybot/2.0 (+https://mybot.example)" || len(got.Header) != 1 {
			t.Errorf("robots.txt request header %v, want only the caller's User-Agent", got.Header)
		}
		if req.URL.String() != before.URL.String() || len(req.Header) != len(before.Header) {
			t.Errorf("the caller's request changed")
		}

		// No User-Agent on the request: Robots.UserAgent.
		got = nil
		r.check(t.Context(), base, robotsReq(t, t.Context(), "http://b.example/"))
		if got.Header.Get("User-Agent") != "mybot" {
			t.Errorf("User-Agent %q, want Robots.UserAgent", got.Header.Get("User-Agent"))
		}
	})
}

func TestRobotsOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://A.Example./x":         "http://a.example",
		"http://a.example:80/":        "http://a.example",
		"https://a.example:443/":      "https://a.example",
		"https://a.example:8443/":     "https://a.example:8443",
		"http://[::1]:80/":            "http://[::1]",
		"http://[::1]:8080/":          "http://[::1]:8080",
		"http://u:p@a.example/x?y#z":  "http://a.example",
		"http://[fe80::1%25eth0]:80/": "http://[fe80::1%eth0]",
		"https://a.example:0443/":     "https://a.example",
		// As the budget keys them (see originKey). Before, the first
		// two were origins of their own, and the zone lower-cased.
		"http://bücher.example/":      "http://xn--bcher-kva.example",
		"http://bücher.example。/":     "http://xn--bcher-kva.example",
		"http://[fe80::1%25Eth0]:80/": "http://[fe80::1%Eth0]",
	} {
		req, _ := http.NewRequest(http.MethodGet, in, nil)
		if got := robotsOrigin(req.URL); got != want {
			t.Errorf("robotsOrigin(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestRobotsMaxOrigins checks that the cache keeps at most MaxOrigins
// origins, whether or not it divides among the shards.
func TestRobotsMaxOrigins(t *testing.T) {
	for _, max := range []int{1, 2, 15, 64, 100} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{})
				base := robotsBase(h)
				r := &Robots{MaxOrigins: max}
				for i := range 1000 {
					r.check(t.Context(), base, robotsReq(t, t.Context(), fmt.Sprintf("http://o%d.example/", i)))
				}
				kept := 0
				for i := range r.cache.shards {
					kept += len(r.cache.shards[i].m)
				}
				if kept > max || kept < max/2 {
					t.Errorf("MaxOrigins %d: %d origins kept", max, kept)
				}
				// The most recent is still there: no fetch.
				n := h.Stats().Fetches
				r.check(t.Context(), base, robotsReq(t, t.Context(), "http://o999.example/"))
				if h.Stats().Fetches != n {
					t.Errorf("MaxOrigins %d: the most recently used origin was forgotten", max)
				}
			})
		})
	}
}

// robotsServed returns a Transport obeying robots.txt body, over a
// server that records the paths of the requests it serves.
func robotsServed(body string) (*Transport, *[]string) {
	sent := new([]string)
	h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{
		Body: body,
		Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { *sent = append(*sent, r.URL.Path) }),
	})
	return &Transport{Base: robotsBase(h), Robots: &Robots{}}, sent
}

// TestRobotsOpaquePath checks that a request whose path is in URL.Opaque,
// in the form "//host/path" that net/http sends as an absolute URL, is
// matched by its path: it was matched as "//host/path", which no rule
// names, and a disallowed path was sent.
func TestRobotsOpaquePath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, sent := robotsServed("User-agent: *\nDisallow: /private\n")
		for _, opaque := range []string{"//a.example/private/x", "/private/y", "//a.example"} {
			req := robotsReq(t, t.Context(), "http://a.example/")
			req.URL.Opaque = opaque
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			if opaque == "//a.example" != (err == nil) {
				t.Errorf("Opaque %q: RoundTrip = %v", opaque, err)
			}
		}
		// "//a.example" is sent as the target "http://a.example", whose
		// path a server reads as empty.
		if len(*sent) != 1 || (*sent)[0] != "" {
			t.Errorf("the server got %q; want only the path of http://a.example", *sent)
		}
	})
}

// TestRobotsTxtRequestKeepsCrawlDelay checks that a request for
// /robots.txt itself through the Transport (a crawler that reads it too)
// is spaced by the Crawl-delay known, and leaves it in place: it set the
// origin's floor to zero, and the next request went at once.
func TestRobotsTxtRequestKeepsCrawlDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var at []time.Duration
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{
			Body: "User-agent: *\nCrawl-delay: 10\n",
			Next: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { at = append(at, time.Since(start)) }),
		})
		tr := &Transport{Base: robotsBase(h), Robots: &Robots{}}
		for _, path := range []string{"/a", "/robots.txt", "/b"} {
			resp, err := tr.RoundTrip(robotsReq(t, t.Context(), "http://a.example"+path))
			if err != nil {
				t.Fatal(err)
			}
			if path == "/robots.txt" {
				at = append(at, time.Since(start))
			}
			resp.Body.Close()
		}
		if want := []time.Duration{0, 10 * time.Second, 20 * time.Second}; !slices.Equal(at, want) {
			t.Errorf("requests sent at %v, want %v (Crawl-delay: 10)", at, want)
		}
	})
}

// TestRobotsZonedIPv6 checks that the robots.txt of an origin whose host
// has an IPv6 zone is fetched: its URL was built with the zone's '%'
// unescaped, which no request accepts, and every path was allowed unread.
func TestRobotsZonedIPv6(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fetched []string
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			fetched = append(fetched, req.URL.String())
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: req,
				Body: io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /\n"))}, nil
		})
		_, err := (&Robots{}).check(t.Context(), base, robotsReq(t, t.Context(), "http://[fe80::1%25eth0]:8080/private"))
		if !errors.Is(err, ErrDisallowed) || len(fetched) != 1 || fetched[0] != "http://[fe80::1%25eth0]:8080/robots.txt" {
			t.Errorf("check = %v after fetching %q; want /private disallowed by http://[fe80::1%%25eth0]:8080/robots.txt", err, fetched)
		}
	})
}

// An IPv6 zone is an interface name, whose case counts: robots.txt is
// fetched through the request's own. Before, through "eth0" for "Eth0".
func TestRobotsZoneCaseKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fetched []string
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			fetched = append(fetched, req.URL.Host)
			return &http.Response{StatusCode: 404, Header: http.Header{}, Request: req, Body: http.NoBody}, nil
		})
		req := robotsReq(t, t.Context(), "http://[fe80::1%25Eth0]:8080/x")
		(&Robots{}).check(t.Context(), base, req)
		if len(fetched) != 1 || fetched[0] != req.URL.Host {
			t.Errorf("robots.txt fetched from hosts %q; want from the request's own, %q", fetched, req.URL.Host)
		}
	})
}

// An internationalised host, its ASCII form and its spelling with an
// ideographic full stop are one origin, whose robots.txt is fetched once.
// Before, three times, kept in three entries.
func TestRobotsIDNAOneOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fetched []string
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			if req.URL.Path == "/robots.txt" {
				fetched = append(fetched, req.URL.Host)
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: req,
				Body: io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /private\n"))}, nil
		})
		r := &Robots{}
		for _, u := range []string{"http://bücher.example/a", "http://xn--bcher-kva.example/b", "http://bücher.example。/c"} {
			if _, err := r.check(t.Context(), base, robotsReq(t, t.Context(), u)); err != nil {
				t.Fatalf("check(%s) = %v", u, err)
			}
		}
		if len(fetched) != 1 {
			t.Errorf("robots.txt of one origin fetched %d times, from %q; want once", len(fetched), fetched)
		}
	})
}

// A path built from url.URL.Path is sent with "!'()" encoded, and the
// server reads it as the path it was built from: a rule on that path
// applies. Before, "Disallow: /wiki/Foo_(bar)" let "/wiki/Foo_%28bar%29"
// through to the server.
func TestRobotsEncodedSegmentCharacters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, sent := robotsServed("User-agent: *\nDisallow: /wiki/Foo_(bar)\n")
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.example/", nil)
		req.URL = &url.URL{Scheme: "http", Host: "a.example", Path: "/wiki/Foo_(bar)"}
		resp, err := tr.RoundTrip(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if !errors.Is(err, ErrDisallowed) || len(*sent) != 0 {
			t.Errorf("RoundTrip(%s) = %v, the server received %q; want it disallowed", req.URL.RequestURI(), err, *sent)
		}
	})
}

// TestRobotsMemoryPerOrigin measures the cache's memory for 10,000 origins
// with a small robots.txt each.
func TestRobotsMemoryPerOrigin(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches 10 000 robots.txt")
	}
	const origins = 10_000
	body := "User-agent: *\nDisallow: /private/\nDisallow: /search?\nAllow: /search/about\nCrawl-delay: 1\n\nUser-agent: other\nDisallow: /\n"
	base := robotsRT(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	})
	r := &Robots{UserAgent: "mybot"}
	check := func(i int) {
		if _, err := r.check(t.Context(), base, robotsReq(t, t.Context(), fmt.Sprintf("http://o%d.example/page", i))); err != nil {
			t.Fatal(err)
		}
	}
	check(0)
	before := robotsHeap()
	for i := 1; i < origins; i++ {
		check(i)
	}
	after := robotsHeap()
	runtime.KeepAlive(r)
	per := float64(int64(after)-int64(before)) / (origins - 1)
	t.Logf("bytes per origin with robots.txt: %.0f (%d origins, 3 rules each)", per, origins)
	if per > 2048 {
		t.Errorf("bytes per origin = %.0f, want at most 2048", per)
	}
}

func robotsHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkRobotsCheck measures check on an origin whose robots.txt is
// cached: the cost robots.txt adds to each request.
func BenchmarkRobotsCheck(b *testing.B) {
	body := "User-agent: *\nDisallow: /private/\nDisallow: /*.pdf$\nAllow: /private/ok\nCrawl-delay: 1\n"
	base := robotsRT(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	})
	r := &Robots{UserAgent: "mybot"}
	req, _ := http.NewRequestWithContext(b.Context(), http.MethodGet, "https://a.example/items/42?page=3", nil)
	if _, err := r.check(b.Context(), base, req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.check(b.Context(), base, req)
		}
	})
}

// TestRobotsMaxOriginsNoRefetch: a crawler that visits MaxOrigins origins
// (not one more) round-robin fetches no robots.txt twice within 24 hours:
// "MaxOrigins is the most origins whose robots.txt is kept at once". The
// bound was split into 16 fixed per-shard quotas, so a shard that hashed
// more than its share evicted (and, round-robin, thrashed) long before
// MaxOrigins.
func TestRobotsMaxOriginsNoRefetch(t *testing.T) {
	for _, max := range []int{64, 1000, 4096} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nDisallow: /private\n"})
				base := robotsBase(h)
				r := &Robots{MaxOrigins: max}
				for pass := range 3 {
					for i := range max {
						if _, err := r.check(t.Context(), base, robotsReq(t, t.Context(), fmt.Sprintf("http://o%d.example/page", i))); err != nil {
							t.Fatal(err)
						}
					}
					_ = pass
				}
				if got := h.Stats().Fetches; got != max {
					t.Errorf("%d origins (= MaxOrigins) visited 3 times: %d robots.txt fetches, want %d", max, got, max)
				}
			})
		})
	}
}

// TestCrawlDelayPerOriginFinerKey: Transport.Robots says the Crawl-delay
// "becomes a floor on the origin's pace", and Transport.Key's own doc
// suggests a Key per API credential. With such a Key, the floor paces the
// origin. It was kept per budget key: N keys on one origin sent N requests
// per Crawl-delay.
func TestCrawlDelayPerOriginFinerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nCrawl-delay: 10\n"})
		tr := &Transport{
			Base:   &ratelimittest.Transport{Handler: h},
			Robots: &Robots{UserAgent: "mybot"},
			Key:    func(r *http.Request) string { return r.Header.Get("X-Account") },
		}
		for i := range 4 {
			req := robotsReq(t, t.Context(), fmt.Sprintf("http://a.example/page%d", i))
			req.Header.Set("X-Account", fmt.Sprint("acct", i))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		st := h.Stats()
		if most := mostWithin(st.Arrivals, 10*time.Second); most > 1 {
			t.Errorf("Crawl-delay 10: %d requests reached http://a.example within 10s (at %v), want 1", most, st.Arrivals)
		}
	})
}

func mostWithin(ts []time.Time, d time.Duration) int {
	most, j := 0, 0
	for i := range ts {
		for ts[i].Sub(ts[j]) >= d {
			j++
		}
		most = max(most, i-j+1)
	}
	return most
}

// TestCrawlDelayPerOriginCoarserKey: a Key that puts two origins under one
// budget key (by registrable domain, say). www asks Crawl-delay: 10, api
// asks none: www is paced by its floor, api is not. The floor was one per
// key, written before the request waited and read when it started: api's
// write (0) between www's write and www's start let the next www request
// go at once.
func TestCrawlDelayPerOriginCoarserKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		www := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nCrawl-delay: 10\n"})
		api := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nAllow: /\n"})
		mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host == "api.example" {
				api.ServeHTTP(w, r)
				return
			}
			www.ServeHTTP(w, r)
		})
		tr := &Transport{
			Base:   &ratelimittest.Transport{Handler: mux},
			Robots: &Robots{UserAgent: "mybot"},
			Key:    func(r *http.Request) string { return "example" },
		}
		get := func(url string) {
			resp, err := tr.RoundTrip(robotsReq(t, t.Context(), url))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		get("http://www.example/0") // t=0; next start under the key at t=10
		go get("http://www.example/1")
		synctest.Wait() // www/1 held until t=10, floor 10 written
		go get("http://api.example/x")
		synctest.Wait() // api held too, floor 0 written
		time.Sleep(10*time.Second + time.Millisecond)
		get("http://www.example/2")
		synctest.Wait()
		st := www.Stats()
		if most := mostWithin(st.Arrivals, 10*time.Second); most > 1 {
			t.Errorf("Crawl-delay 10: %d requests reached http://www.example within 10s (at %v), want 1", most, st.Arrivals)
		}
	})
}

// TestCrawlDelayUnderCustomKeysKeepsOrder: requests to one origin with a
// Crawl-delay, each under a key of its own (Transport.Key), start in the
// order the origin's floor first held them, as requests under one key do
// (TestPaceKeepsOrder). They raced for each start before.
func TestCrawlDelayUnderCustomKeysKeepsOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		robots := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nCrawl-delay: 1\n"})
		var (
			mu    sync.Mutex
			order []string
		)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/robots.txt" {
				mu.Lock()
				order = append(order, r.URL.Path)
				mu.Unlock()
			}
			robots.ServeHTTP(w, r)
		})
		tr := &Transport{
			Base:   &ratelimittest.Transport{Handler: h},
			Robots: &Robots{UserAgent: "mybot"},
			Key:    func(r *http.Request) string { return r.Header.Get("X-Account") },
		}
		get := func(i int) {
			req := robotsReq(t, t.Context(), fmt.Sprintf("http://a.example/p%d", i))
			req.Header.Set("X-Account", fmt.Sprint("acct", i))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		get(0)
		var wg sync.WaitGroup
		for i := 1; i <= 8; i++ {
			wg.Go(func() { get(i) })
			time.Sleep(time.Millisecond)
		}
		wg.Wait()
		want := []string{"/p0", "/p1", "/p2", "/p3", "/p4", "/p5", "/p6", "/p7", "/p8"}
		if !slices.Equal(order, want) {
			t.Errorf("pages fetched in the order %v, want %v", order, want)
		}
	})
}

// A rule naming an octet of US-ASCII that is neither reserved nor
// unreserved (" < > \ ^ ` { | }) matches the path net/http sends, which
// always encodes it. Before, the pattern kept it raw and never matched:
// the 4 paths below were sent.
func TestRobotsUnsafeASCIIEncoded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{
			Body: "User-agent: *\nDisallow: /wiki/{{\nDisallow: /a|b\nDisallow: /*\"\nDisallow: /x<y\n",
		})
		tr := &Transport{Base: robotsBase(h), Robots: &Robots{UserAgent: "mybot"}}
		for _, u := range []string{
			"http://a.example/wiki/{{template}}",
			"http://a.example/a|b",
			"http://a.example/say\"hi\"",
			"http://a.example/x<y",
		} {
			req := robotsReq(t, t.Context(), u)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Errorf("GET %s (sent as %s): sent, want ErrDisallowed", u, req.URL.RequestURI())
			}
		}
		if n := h.Stats().Requests; n != 0 {
			t.Errorf("%d disallowed requests reached the origin, want 0", n)
		}
	})
}

// An Opaque that is an absolute URL is sent as it is; the server serves
// its path, which the rules are matched against. Before, the whole string
// was matched, and no rule held it back.
func TestRobotsOpaqueAbsoluteURL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nDisallow: /private\n"})
		r := &Robots{}
		req := robotsReq(t, t.Context(), "http://a.example/")
		req.URL = &url.URL{Scheme: "http", Host: "a.example", Opaque: "http://a.example/private"}
		if _, err := r.check(t.Context(), robotsBase(h), req); err == nil {
			t.Errorf("check(request-target %q) = nil, want ErrDisallowed by /private", req.URL.RequestURI())
		}
	})
}

// "/public/../private" is "/private" to the server (RFC 3986 §5.2.4), and
// %2E is a dot (§6.2.2.2). Before, the path was matched as written and
// Disallow: /private let both requests through.
func TestRobotsDotSegments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nDisallow: /private\n"})
		r := &Robots{}
		for _, u := range []string{"http://a.example/public/../private/x", "http://a.example/public/%2E%2E/private/x"} {
			req := robotsReq(t, t.Context(), u)
			if _, err := r.check(t.Context(), robotsBase(h), req); err == nil {
				t.Errorf("check(%s, sent as %q) = nil, want ErrDisallowed by /private", u, req.URL.RequestURI())
			}
		}
	})
}

// A RobotsError quotes the user-agent line robots.txt wrote, as it does the
// rule: a hostile file puts no control byte in the caller's logs. Before,
// the agent was printed raw.
func TestRobotsErrorQuotesAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{
			Body: "User-agent: mybot\x1b[2K\x1b[1Gpolite: all good\x07\nDisallow: /private\n",
		})
		r := &Robots{UserAgent: "mybot"}
		_, err := r.check(t.Context(), robotsBase(h), robotsReq(t, t.Context(), "http://a.example/private"))
		if err == nil {
			t.Fatal("not disallowed")
		}
		if msg := err.Error(); strings.ContainsAny(msg, "\x1b\x07") {
			t.Errorf("Error() holds raw control bytes from robots.txt: %q", msg)
		}
	})
}

// What an origin's robots.txt keeps is bounded by what was read, whatever
// its shape. Before, a 512 KiB file of "allow:*" lines kept about 1.7 MB
// per origin: a string header, a struct and an allocation per rule.
func TestRobotsKeptMemory(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for b.Len() < maxRobotsBytes-8 {
		b.WriteString("allow:*\n")
	}
	body := b.String()
	base := robotsRT(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	})
	r := &Robots{}
	check := func(i int) {
		if _, err := r.check(t.Context(), base, robotsReq(t, t.Context(), fmt.Sprintf("http://o%d.example/", i))); err != nil {
			t.Fatal(err)
		}
	}
	check(0)
	const n = 20
	before := robotsHeap()
	for i := 1; i <= n; i++ {
		check(i)
	}
	after := robotsHeap()
	runtime.KeepAlive(r)
	if per := (int64(after) - int64(before)) / n; per > maxRobotsBytes {
		t.Errorf("%d bytes kept per origin for a %d-byte robots.txt, more than the %d read", per, len(body), maxRobotsBytes)
	}
}

// A request whose context has ended fetches nothing and takes no place in
// the cache. Before, it began a fetch, which Base was called for, and took
// an entry, evicting an origin fetched already: 16 such requests cost 16
// calls to Base and the next request to the origin kept a refetch.
func TestRobotsEndedContextFetchesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nDisallow: /private\n"})
		calls := 0
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			calls++
			return robotsBase(h).RoundTrip(req)
		})
		r := &Robots{MaxOrigins: 1}
		if _, err := r.check(t.Context(), base, robotsReq(t, t.Context(), "http://kept.example/page")); err != nil {
			t.Fatal(err)
		}
		ended, cancel := context.WithCancel(t.Context())
		cancel()
		for i := range 16 {
			if _, err := r.check(ended, base, robotsReq(t, ended, fmt.Sprintf("http://o%d.example/page", i))); !errors.Is(err, context.Canceled) {
				t.Fatalf("check with an ended context = %v, want context.Canceled", err)
			}
		}
		if _, err := r.check(t.Context(), base, robotsReq(t, t.Context(), "http://kept.example/page")); err != nil {
			t.Fatal(err)
		}
		if calls != 1 {
			t.Errorf("%d calls to Base, want 1: requests whose context ended fetched, or evicted the origin fetched", calls)
		}
	})
}

// A robots.txt that https redirects to http is followed, and its rules
// apply (RFC 9309 §2.3.1.2). Before, only redirects to the same scheme or
// from http to https were followed: this one left robots.txt unavailable,
// every path allowed, and the request for /private/ went.
func TestRobotsRedirectToHTTPFollowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent []string
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}
			switch {
			case req.URL.Path == "/robots.txt" && req.URL.Scheme == "https":
				resp.StatusCode = http.StatusMovedPermanently
				resp.Header.Set("Location", "http://a.example/robots.txt")
			case req.URL.Path == "/robots.txt":
				resp.Body = io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /private/\n"))
			default:
				sent = append(sent, req.URL.String())
			}
			return resp, nil
		})
		tr := &Transport{Base: base, Robots: &Robots{UserAgent: "mybot"}}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://a.example/private/account", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, ErrDisallowed) || len(sent) != 0 {
			t.Errorf("RoundTrip = %v (sent %q); want a *RobotsError for /private/, nothing sent", err, sent)
		}
	})
}

// An unreachable robots.txt's entry keeps at most 1 KiB of its fetch's
// error: a server whose status line net/http cannot read has it quoted
// whole in the error, up to net/http's header limit. Before, each such
// origin kept its megabyte until the next fetch, counted as one origin
// against MaxOrigins.
func TestRobotsErrorBounded(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	base := robotsRT(func(req *http.Request) (*http.Response, error) {
		return nil, errors.New(`net/http: malformed HTTP status code "` + huge + `"`)
	})
	tr := &Transport{Base: base, Robots: &Robots{UserAgent: "mybot"}}
	get := func(i int) error {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("http://o%d.example/page", i), nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	get(0)
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	before := m.HeapAlloc
	const origins = 20
	for i := 1; i <= origins; i++ {
		err := get(i)
		var rerr *RobotsError
		if !errors.As(err, &rerr) || !rerr.Unreachable {
			t.Fatalf("origin %d: %v, want an unreachable robots.txt", i, err)
		}
	}
	// The cached entry answers the next request with what it kept.
	err := get(1)
	if len(err.Error()) > 2<<10 {
		t.Errorf("the error of a cached unreachable robots.txt is %d bytes, want at most about 1 KiB", len(err.Error()))
	}
	runtime.GC()
	runtime.ReadMemStats(&m)
	if per := (int64(m.HeapAlloc) - int64(before)) / origins; per > 16<<10 {
		t.Errorf("%d bytes kept an origin whose robots.txt failed with a 1 MiB error, want at most 16 KiB", per)
	}
	runtime.KeepAlive(tr)
}

// robots.txt of a host longer than a budget key keeps (see digestLong) is
// fetched from that host, not from the key's digest. For a while the
// fetch went to http://~sha256-…/robots.txt, whose answer (404 here, every
// path allowed) let a disallowed path through.
func TestRobotsLongHostFetchedFromItsHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		host := strings.Repeat("a", 60) + "." + strings.Repeat("b", 60) + "." + strings.Repeat("c", 60) + "." + strings.Repeat("d", 60) + "." + strings.Repeat("e", 60) + ".example"
		var mu sync.Mutex
		var robotsHosts []string
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}
			if req.URL.Path == "/robots.txt" {
				mu.Lock()
				robotsHosts = append(robotsHosts, req.URL.Host)
				mu.Unlock()
				if req.URL.Host == host {
					resp.Body = io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /private/\n"))
				} else {
					resp.StatusCode = http.StatusNotFound
				}
			}
			return resp, nil
		})
		tr := &Transport{Base: base, Robots: &Robots{UserAgent: "mybot"}}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/private/x", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		mu.Lock()
		defer mu.Unlock()
		if len(robotsHosts) != 1 || robotsHosts[0] != host {
			t.Errorf("robots.txt fetched from %d hosts, want once from the request's host (%d bytes)", len(robotsHosts), len(host))
		}
		if !errors.Is(err, ErrDisallowed) {
			t.Errorf("RoundTrip(/private/x) = %v, want the *RobotsError of its host's robots.txt", err)
		}
	})
}

// A fetch error of a few KiB (a redirect to a long signed URL) is kept
// whole: RobotsError still unwraps to its cause. For a while every error
// over 1 KiB was cut to its message.
func TestRobotsLongErrorStillUnwraps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		signed := "http://cdn.example/robots.txt?X-Amz-Signature=" + strings.Repeat("0123456789abcdef", 70)
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			switch {
			case req.URL.Host == "a.example" && req.URL.Path == "/robots.txt":
				h := http.Header{"Location": {signed}}
				return &http.Response{StatusCode: http.StatusFound, Header: h, Body: http.NoBody, Request: req}, nil
			case req.URL.Host == "cdn.example":
				return nil, &url.Error{Op: "Get", URL: req.URL.String(), Err: context.DeadlineExceeded}
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
		})
		tr := &Transport{Base: base, Robots: &Robots{UserAgent: "mybot"}}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.example/page", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		var rerr *RobotsError
		if !errors.As(err, &rerr) || !rerr.Unreachable {
			t.Fatalf("RoundTrip = %v, want an unreachable robots.txt", err)
		}
		var uerr *url.Error
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &uerr) {
			t.Errorf("RobotsError.Err = %T: want it to unwrap to context.DeadlineExceeded and a *url.Error", rerr.Err)
		}
	})
}

// A request for /robots.txt itself, after the origin's robots.txt left
// the cache (MaxOrigins), set the origin's floor to the interval of no
// entry, zero, and the next page went with it. An interval not known
// leaves the floor the Transport keeps.
func TestRobotsTxtRequestAfterEvictionKeepsCrawlDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var at []time.Duration
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{
			Body: "User-agent: *\nCrawl-delay: 10\n",
			Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Host == "a.example" {
					at = append(at, time.Since(start))
				}
			}),
		})
		tr := &Transport{Base: robotsBase(h), Robots: &Robots{MaxOrigins: 1}}
		for _, url := range []string{"http://a.example/a", "http://b.example/x", "http://a.example/robots.txt", "http://a.example/b"} {
			resp, err := tr.RoundTrip(robotsReq(t, t.Context(), url))
			if err != nil {
				t.Fatal(err)
			}
			if url == "http://a.example/robots.txt" {
				at = append(at, time.Since(start))
			}
			resp.Body.Close()
		}
		if want := []time.Duration{0, 10 * time.Second, 20 * time.Second}; !slices.Equal(at, want) {
			t.Errorf("requests to a.example sent at %v, want %v (Crawl-delay: 10)", at, want)
		}
	})
}

// A Key that writes its key as an origin ("http://example.com", for
// www.example.com and example.com alike) shared the local ceilings' entry
// of that origin, whose floor example.com's Crawl-delay sets: every
// request under the key was held 10 s, www's too, which asks none. A
// custom key's entry is apart (budgetKey.ceil), and the floor paces the
// origin alone.
func TestCrawlDelayPerOriginKeyWrittenAsOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nCrawl-delay: 10\n"})
		free := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nAllow: /\n"})
		mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host == "www.example.com" {
				free.ServeHTTP(w, r)
				return
			}
			slow.ServeHTTP(w, r)
		})
		tr := &Transport{
			Base:   &ratelimittest.Transport{Handler: mux},
			Robots: &Robots{UserAgent: "mybot"},
			Key:    func(r *http.Request) string { return "http://example.com" },
		}
		get := func(url string) {
			resp, err := tr.RoundTrip(robotsReq(t, t.Context(), url))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		get("http://example.com/0") // example.com's floor: 10 s
		start := time.Now()
		for i := range 3 {
			get("http://www.example.com/" + itoa(i))
		}
		if took := time.Since(start); took >= 10*time.Second {
			t.Errorf("3 requests to www.example.com, which asks no Crawl-delay, took %v: paced by example.com's Crawl-delay of 10s (arrivals %v)", took, free.Stats().Arrivals)
		}
	})
}
