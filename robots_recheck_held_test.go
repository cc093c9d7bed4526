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
)

// recheckOrigin is an in-memory origin: robots.txt answers robots(n), n the
// fetch's number from 1; every other path answers page(path). It records
// when each request for a page (not robots.txt) arrived, and how many
// times robots.txt was fetched.
type recheckOrigin struct {
	start  time.Time
	robots func(n int) (int, string)
	page   func(path string, at time.Duration) *http.Response

	mu       sync.Mutex
	fetches  int
	arrivals map[string][]time.Duration
}

func (s *recheckOrigin) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Body != nil {
		req.Body.Close()
	}
	at := time.Since(s.start)
	if req.URL.Path == "/robots.txt" {
		s.fetches++
		code, body := s.robots(s.fetches)
		return &http.Response{StatusCode: code, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	}
	if s.arrivals == nil {
		s.arrivals = map[string][]time.Duration{}
	}
	s.arrivals[req.URL.Path] = append(s.arrivals[req.URL.Path], at)
	if s.page != nil {
		resp := s.page(req.URL.Path, at)
		resp.Request = req
		return resp, nil
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

func (s *recheckOrigin) sent(path string) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.arrivals[path]...)
}

func (s *recheckOrigin) robotsFetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

func recheckGet(ctx context.Context, tr http.RoundTripper, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// The first form of the recheck gave a grant whose robots.txt verdict
// had expired back (control.Outcome{Failed, Unsent}) and asked anew. The
// budget took the start back, but the Transport's local ceilings did not:
// the start never sent still spaced the origin, and the request waited a
// whole MaxRate interval (or Crawl-delay floor) again, behind itself. With
// Robots.CrawlDelayOnly and an unreachable robots.txt (its verdict kept 1,
// 2, 4 ... 60 minutes) and MaxRate one request per 10 minutes, the second
// request went at 50m rather than 10m, after four rechecks, past its
// MaxWait of 15m. A recheck now holds the grant, and CrawlDelayOnly, which
// disallows nothing, decides no request again.
func TestRecheckHeldPhantomStartDelaysRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := &recheckOrigin{start: time.Now(), robots: func(int) (int, string) { return http.StatusServiceUnavailable, "" }}
		var mu sync.Mutex
		waits := 0
		tr := &Transport{
			Base:    site,
			MaxRate: 1.0 / 600, // one request every 10 minutes
			MaxWait: 15 * time.Minute,
			Robots:  &Robots{UserAgent: "mybot", CrawlDelayOnly: true},
			OnEvent: func(e Event) {
				if e.Kind == EventWait && e.Request != nil && e.Request.URL.Path == "/b" {
					mu.Lock()
					waits++
					mu.Unlock()
				}
			},
		}
		if err := recheckGet(t.Context(), tr, "http://a.example/a"); err != nil {
			t.Fatal(err)
		}
		errB := recheckGet(t.Context(), tr, "http://a.example/b")
		sent := site.sent("/b")
		if errB != nil {
			t.Errorf("/b: %v", errB)
		}
		if len(sent) != 1 || sent[0] > 10*time.Minute+time.Second {
			t.Errorf("/b, paced by MaxRate 1/600s behind /a, sent at %v; want 10m0s; robots.txt fetched %d times", sent, site.robotsFetches())
		}
		if len(sent) == 1 && sent[0] > tr.MaxWait {
			t.Errorf("/b waited %v in all, past MaxWait %v, without a *WaitError", sent[0], tr.MaxWait)
		}
		mu.Lock()
		defer mu.Unlock()
		if waits != 1 {
			t.Errorf("/b was sent once (attempt 1) but reported %d EventWait events", waits)
		}
	})
}

// With a pace longer than the longest retry interval of an unreachable
// robots.txt (1 hour), the first form rechecked for ever: each wait (2
// hours, behind the start of the previous round) outlasted the verdict,
// then at most an hour long, and the request never went, the origin
// receiving nothing but robots.txt fetches.
func TestRecheckHeldLivelockLongPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		site := &recheckOrigin{start: time.Now(), robots: func(int) (int, string) { return http.StatusServiceUnavailable, "" }}
		tr := &Transport{
			Base:    site,
			MaxRate: 1.0 / 7200, // one request every 2 hours
			MaxWait: 3 * time.Hour,
			Robots:  &Robots{UserAgent: "mybot", CrawlDelayOnly: true},
		}
		if err := recheckGet(t.Context(), tr, "http://a.example/a"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- recheckGet(ctx, tr, "http://a.example/b") }()
		time.Sleep(24 * time.Hour)
		sent := site.sent("/b")
		fetches := site.robotsFetches()
		cancel()
		<-done
		if len(sent) == 0 {
			t.Errorf("/b, paced to one request every 2h, not sent within 24h; robots.txt fetched %d times meanwhile", fetches)
		}
	})
}

// A request that gave its grant back kept no place in line: its first
// attempt asked anew as a new request would, so a request that asked
// after it went first. The first robots.txt expires at 24h; /b asks at
// 23h59m and waits for the quota's reset at 24h9m; /c asks at 24h1m
// (robots.txt fetched again, allowed). /b goes at 24h9m and /c at the
// next window; the first form sent /c in /b's turn.
func TestRecheckHeldLosesPlaceInLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		const window = 10 * time.Minute
		var mu sync.Mutex
		used := map[int64]int{}
		site := &recheckOrigin{start: start,
			robots: func(int) (int, string) { return http.StatusOK, "User-agent: *\nAllow: /\n" },
			page: func(path string, at time.Duration) *http.Response {
				mu.Lock()
				defer mu.Unlock()
				// Fixed windows of 10 minutes, from 23h59m on (a quota of
				// one request a window).
				w := int64((at - (24*time.Hour - time.Minute)) / window)
				if at < 24*time.Hour-time.Minute {
					w = -1
				}
				used[w]++
				left := (24*time.Hour - time.Minute) + time.Duration(w+1)*window - at
				h := http.Header{}
				h.Set("RateLimit-Policy", `"default";q=1;w=600`)
				r := max(0, 1-used[w])
				h.Set("RateLimit", `"default";r=`+itoa(r)+`;t=`+itoa(int(left.Seconds())))
				code := http.StatusOK
				if used[w] > 1 {
					code = http.StatusTooManyRequests
					h.Set("Retry-After", itoa(int(left.Seconds())))
				}
				return &http.Response{StatusCode: code, Header: h, Body: http.NoBody}
			},
		}
		tr := &Transport{Base: site, Robots: &Robots{UserAgent: "mybot"}, MaxWait: time.Hour}
		if err := recheckGet(t.Context(), tr, "http://a.example/warm"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(24*time.Hour - time.Minute - time.Since(start))
		if err := recheckGet(t.Context(), tr, "http://a.example/a"); err != nil { // spends the window
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { recheckGet(t.Context(), tr, "http://a.example/b") })
		time.Sleep(2 * time.Minute) // 24h1m: robots.txt expired
		wg.Go(func() { recheckGet(t.Context(), tr, "http://a.example/c") })
		wg.Wait()
		b, c := site.sent("/b"), site.sent("/c")
		if len(b) == 0 || len(c) == 0 || b[0] > c[0] {
			t.Errorf("/b asked at 23h59m, /c at 24h1m: /b sent %v, /c sent %v; want /b first (its place in line)", b, c)
		}
	})
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// The common case, no unreachable robots.txt: Crawl-delay 600 both times
// robots.txt is fetched, allowing every path. /b asks at 23h55m and is
// held by the floor until 24h5m, past the file's 24 hours: it is decided
// again (allowed, as before); the first form gave its start back, which
// still counted in the origin's floor, so that it waited another 10
// minutes behind itself and went at 24h15m instead of 24h5m.
func TestRecheckHeldPhantomStartAtExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		site := &recheckOrigin{start: start, robots: func(int) (int, string) { return http.StatusOK, "User-agent: *\nCrawl-delay: 600\n" }}
		tr := &Transport{Base: site, Robots: &Robots{UserAgent: "mybot"}, MaxWait: time.Hour}
		if err := recheckGet(t.Context(), tr, "http://a.example/first"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(24*time.Hour - 5*time.Minute)
		if err := recheckGet(t.Context(), tr, "http://a.example/a"); err != nil {
			t.Fatal(err)
		}
		if err := recheckGet(t.Context(), tr, "http://a.example/b"); err != nil {
			t.Fatal(err)
		}
		if b := site.sent("/b"); len(b) != 1 || b[0] > 24*time.Hour+5*time.Minute+time.Second {
			t.Errorf("/b, held by Crawl-delay 600 behind /a (sent at %v), sent at %v; want 24h5m0s", site.sent("/a"), b)
		}
	})
}

// The same with the floor from robots.txt's own Crawl-delay and the
// default MaxWait: Robots.CrawlDelayOnly keeps the floor of the file last
// read while robots.txt is unreachable (answers 503 after the first
// fetch). /b, held 10 minutes by the floor, went 50 minutes late.
func TestRecheckHeldCrawlDelayOnlyUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		site := &recheckOrigin{start: start, robots: func(n int) (int, string) {
			if n == 1 {
				return http.StatusOK, "User-agent: *\nCrawl-delay: 600\n"
			}
			return http.StatusServiceUnavailable, ""
		}}
		tr := &Transport{Base: site, Robots: &Robots{UserAgent: "mybot", CrawlDelayOnly: true}}
		if err := recheckGet(t.Context(), tr, "http://a.example/first"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(24 * time.Hour) // robots.txt now unreachable: verdicts of 1, 2, 4 ... minutes
		at := time.Since(start)
		if err := recheckGet(t.Context(), tr, "http://a.example/a"); err != nil {
			t.Fatal(err)
		}
		errB := recheckGet(t.Context(), tr, "http://a.example/b")
		b := site.sent("/b")
		if errB != nil || len(b) != 1 || b[0]-at > 10*time.Minute+time.Second {
			t.Errorf("/b, held by Crawl-delay 600 behind /a (MaxWait 10m): %v, sent %v after; want sent 10m after (robots.txt fetched %d times)", errB, durationsSince(b, at), site.robotsFetches())
		}
	})
}

func durationsSince(ds []time.Duration, at time.Duration) []time.Duration {
	var out []time.Duration
	for _, d := range ds {
		out = append(out, d-at)
	}
	return out
}

// closesBody is a request body that counts its Closes.
type closesBody struct {
	io.Reader
	closes atomic.Int32
}

func (b *closesBody) Close() error { b.closes.Add(1); return nil }

// A request decided again while held (see redecide), whose fetch of
// robots.txt panics in Base: the panic goes on, and the body of the first
// attempt, never sent, is closed, as every other path closes it.
//
// MaxRate 1/600s: /now at 23h55m, a POST to /held right after it, held by
// the pace to 24h5m, past its robots.txt's end (24h); the fetch panics.
func TestRobotsRedecidePanicClosesBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fetches atomic.Int32
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			if req.Body != nil {
				req.Body.Close()
			}
			if req.URL.Path == "/robots.txt" {
				if fetches.Add(1) > 1 {
					panic("robots.txt fetch broken")
				}
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("User-agent: *\nAllow: /\n")), Request: req}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
		})
		tr := &Transport{Base: base, Robots: &Robots{UserAgent: "bot"}, MaxRate: 1.0 / 600, MaxWait: time.Hour}
		if err := recheckGet(t.Context(), tr, "http://a.example/first"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(robotsMaxAge - 5*time.Minute)
		if err := recheckGet(t.Context(), tr, "http://a.example/now"); err != nil {
			t.Fatal(err)
		}
		body := &closesBody{Reader: strings.NewReader("payload")}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://a.example/held", body)
		req.ContentLength = int64(len("payload"))
		panicked := func() (p bool) {
			defer func() { p = recover() != nil }()
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
			return false
		}()
		if !panicked {
			t.Fatalf("the panic of Base fetching robots.txt did not go on (fetches: %d)", fetches.Load())
		}
		if n := body.closes.Load(); n != 1 {
			t.Errorf("the body of a request never sent, whose robots.txt fetch panicked, was closed %d times, want 1", n)
		}
	})
}

// A request held with no end known (a MaxConcurrency slot another
// request keeps) is woken at MaxWait to fail with its *WaitError: its
// verdict expired meanwhile, it is not decided again first, which would
// make the error come a fetch of robots.txt late (up to 30 s).
//
// MaxConcurrency 1, MaxWait 1m: /stream holds the slot from 24h-30s;
// /held asks at 24h-20s and is woken at 24h+40s, past the end (24h) of
// the robots.txt fetched at 0; the file's second fetch takes 20 s.
func TestRobotsRedecideNotPastMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var fetches atomic.Int32
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}
			switch req.URL.Path {
			case "/robots.txt":
				if fetches.Add(1) > 1 {
					time.Sleep(20 * time.Second) // a slow robots.txt
				}
				resp.Body = io.NopCloser(strings.NewReader("User-agent: *\nAllow: /\n"))
			case "/stream":
				<-release // keeps the only slot
			}
			return resp, nil
		})
		tr := &Transport{Base: base, Robots: &Robots{UserAgent: "bot"}, MaxConcurrency: 1, MaxWait: time.Minute}
		if err := recheckGet(t.Context(), tr, "http://a.example/first"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(robotsMaxAge - 30*time.Second)
		streamDone := make(chan error, 1)
		go func() { streamDone <- recheckGet(t.Context(), tr, "http://a.example/stream") }()
		time.Sleep(10 * time.Second)
		asked := time.Now()
		err := recheckGet(t.Context(), tr, "http://a.example/held")
		waited := time.Since(asked)
		close(release)
		if err := <-streamDone; err != nil {
			t.Fatal(err)
		}
		var we *WaitError
		if !errors.As(err, &we) {
			t.Errorf("/held, held by the slot for MaxWait: %v, want a *WaitError", err)
		}
		if waited > tr.MaxWait+time.Second {
			t.Errorf("/held failed %v after it asked, past MaxWait %v (robots.txt fetched %d times)", waited, tr.MaxWait, fetches.Load())
		}
	})
}

// A request woken shortly before MaxWait's limit (here by another's
// headers, its body keeping the only slot) whose verdict expired waits
// for the fetch of robots.txt until the limit at most: a 20 s fetch made
// its *WaitError come 19 s past MaxWait.
func TestRobotsRedecideBoundedByMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		release := make(chan struct{})
		var fetches atomic.Int32
		base := storeRT(func(req *http.Request) (*http.Response, error) {
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req, ContentLength: -1}
			switch req.URL.Path {
			case "/robots.txt":
				if fetches.Add(1) > 1 {
					time.Sleep(20 * time.Second) // a slow robots.txt
				}
				resp.Body = io.NopCloser(strings.NewReader("User-agent: *\nAllow: /\n"))
			case "/stream":
				time.Sleep(time.Until(start.Add(24*time.Hour + 39*time.Second)))
				pr, pw := io.Pipe()
				go func() { <-release; pw.Close() }()
				resp.Body = pr // streams: keeps the only slot
			}
			return resp, nil
		})
		tr := &Transport{Base: base, Robots: &Robots{UserAgent: "bot"}, Budget: &Budget{MaxConcurrency: 1}, MaxWait: time.Minute}
		if err := recheckGet(t.Context(), tr, "http://a.example/first"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(robotsMaxAge - 30*time.Second - time.Since(start))
		streamDone := make(chan error, 1)
		go func() {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.example/stream", nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			streamDone <- err
		}()
		time.Sleep(10 * time.Second)
		asked := time.Now()
		err := recheckGet(t.Context(), tr, "http://a.example/held")
		waited := time.Since(asked)
		close(release)
		if err := <-streamDone; err != nil {
			t.Fatal(err)
		}
		var we *WaitError
		if !errors.As(err, &we) {
			t.Errorf("/held, held by the slot for MaxWait: %v, want a *WaitError", err)
		}
		if waited > tr.MaxWait {
			t.Errorf("/held failed (%v) %v after it asked, past MaxWait %v: woken 1 s before its limit, it waited for robots.txt (%d fetches) before failing", err, waited, tr.MaxWait, fetches.Load())
		}
		time.Sleep(time.Minute) // the fetch ends, for the others
	})
}
