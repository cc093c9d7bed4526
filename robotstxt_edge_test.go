package polite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// A Crawl-delay written with many thousands separators ("1,000,000,...")
// built its number by concatenation, a copy of it for each group: a line
// of 128 KiB allocated about 1.7 GB, and one filling the 512 KiB read took
// 6 s to parse, while every request to the origin waited.
func TestCrawlDelayThousandsLinear(t *testing.T) {
	const groups = 1 << 15 // a line of 128 KiB
	body := []byte("User-agent: *\nCrawl-delay: 1" + strings.Repeat(",000", groups) + "\n")
	allocs := testing.AllocsPerRun(1, func() { parseRobots(body, "") })
	if allocs > 64 {
		t.Errorf("parseRobots made %.0f allocations for a %d-byte Crawl-delay line, want a few", allocs, len(body))
	}
	if f := parseRobots(body, ""); f.interval != maxCrawlInterval {
		t.Errorf("interval = %v, want the cap %v", f.interval, maxCrawlInterval)
	}
	for _, tt := range []struct {
		v    string
		want float64
	}{
		{"1,000", 1000},
		{"1,000,000", 1e6},
		{"1,000.5", 1000.5},
		{"1,000,00", 1000}, // a group not of three digits ends the number
		{"1,5", 1.5},
	} {
		if got, ok := parseCrawlDelay(tt.v); !ok || got != tt.want {
			t.Errorf("parseCrawlDelay(%q) = %v, %v, want %v", tt.v, got, ok, tt.want)
		}
	}
}

// A Crawl-delay of parts glued by commas ("1m,30s") reads each part's
// word to the next space: at most maxDelayParts parts are read, so that a
// line of thousands costs its length, not its square (3 s for 40,000
// parts when every part was read; the bound is generous, for slow and
// instrumented builds).
func TestCrawlDelayGluedPartsLinear(t *testing.T) {
	for _, part := range []string{"1m,", "1m;1", "1h,1m,"} {
		v := strings.Repeat(part, (128<<10)/len(part))
		start := time.Now()
		got, ok := parseCrawlDelay(v)
		if d := time.Since(start); d > time.Second {
			t.Errorf("parseCrawlDelay of %d bytes of %q took %v", len(v), part, d)
		}
		if !ok || got < 60 {
			t.Errorf("parseCrawlDelay(%q...) = %v, %v, want a minute at least", part, got, ok)
		}
	}
}

// "1e3" and "10s" were both read; "1e3s" was read as 1 s, its exponent
// taken for the unit.
func TestCrawlDelayExponentWithUnit(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want float64
	}{
		{"1e3", 1000},
		{"1e3s", 1000},
		{"1e3 s", 1000},
		{"1E+1m", 600},
		{"5e-1s", 0.5},
		{"2e", 2},     // no digit after the e: no exponent
		{"3eons", 3},  // an unknown unit, read as seconds
		{"2e-min", 2}, // no digit after the sign: the rest is the unit
	} {
		if got, ok := parseCrawlDelay(tt.v); !ok || got != tt.want {
			t.Errorf("parseCrawlDelay(%q) = %v, %v, want %v", tt.v, got, ok, tt.want)
		}
	}
	if got, ok := parseRequestRate("1/1e1s"); !ok || got != 10 {
		t.Errorf(`parseRequestRate("1/1e1s") = %v, %v, want 10 s`, got, ok)
	}
}

// '[' and ']' mean nothing in a path or query, and net/http sends them
// either way: as they are in a path parsed from a link, encoded in one
// built from URL.Path or url.Values. A pattern's '[' stayed raw and a
// path's "%5B" encoded, so a rule written in one form missed a request
// sent in the other, and the disallowed request was sent.
func TestRobotsBracketsEitherForm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := 0
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{
			Body: "User-agent: *\nDisallow: /*filter[\nDisallow: /tag/%5Bx%5D\n",
			Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent++ }),
		})
		tr := &Transport{Base: robotsBase(h), Robots: &Robots{UserAgent: "mybot"}}
		q := url.Values{"filter[color]": {"red"}}.Encode() // filter%5Bcolor%5D=red
		for _, u := range []*url.URL{
			{Scheme: "http", Host: "a.example", Path: "/shop", RawQuery: q},
			{Scheme: "http", Host: "a.example", Path: "/shop/filter[color]"}, // sent as /shop/filter%5Bcolor%5D
			mustParseURL(t, "http://a.example/shop/filter[x]"),               // sent as it is
			mustParseURL(t, "http://a.example/tag/[x]"),                      // sent as it is
			{Scheme: "http", Host: "a.example", Path: "/tag/[x]"},            // sent as /tag/%5Bx%5D
		} {
			req := (&http.Request{Method: "GET", URL: u, Header: http.Header{}}).WithContext(t.Context())
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
				t.Errorf("GET %s sent, want ErrDisallowed", u.RequestURI())
			}
		}
		if sent != 0 {
			t.Errorf("%d disallowed requests reached the origin", sent)
		}
		req := (&http.Request{Method: "GET", URL: mustParseURL(t, "http://a.example/tag/[y]"), Header: http.Header{}}).WithContext(t.Context())
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("GET /tag/[y]: %v, want it sent", err)
		}
		resp.Body.Close()
		time.Sleep(time.Second)
	})
}

func mustParseURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// RFC 9309 §2.1 separates a record's parts with SP and HTAB, and a pattern
// may hold any other character. Values were trimmed of Unicode's white
// space too: "Allow: /public<NBSP>" (allowing /public%C2%A0...) was read as
// "Allow: /public", and /publicity, which the file disallows, was allowed.
func TestRobotsTrimsASCIISpaceOnly(t *testing.T) {
	f := parseRobots([]byte("User-agent: *\nDisallow: /\nAllow: /public\u00a0\nAllow:\t/open \t\v\f\n"), "")
	for _, tt := range []struct {
		path  string
		allow bool
	}{
		{"/publicity", false},
		{"/public%C2%A0x", true},
		{"/opening", true},
	} {
		r, ok := f.match(robotsPath(mustParseURL(t, "http://a.example"+tt.path)))
		if !ok || r.allow != tt.allow {
			t.Errorf("%s: rule %q allow %v, want allow %v", tt.path, r.pattern, r.allow, tt.allow)
		}
	}
}

// A robots.txt slower than every request's deadline was fetched anew by
// each request, the fetch abandoned with it, and never read: one fetch a
// page tried, and no page decided. The fetch now goes on without them.
func TestRobotsSlowerThanEveryDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Delay: 5 * time.Second, Body: "User-agent: *\nDisallow: /private\n"})
		base := robotsBase(h)
		r := &Robots{}
		decided := 0
		for i := range 10 {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			path := "/page"
			if i%2 == 1 {
				path = "/private"
			}
			_, err := r.check(ctx, base, robotsReq(t, ctx, "http://slow.example"+path))
			cancel()
			switch {
			case err == nil:
				decided++
				if path == "/private" {
					t.Errorf("GET %s allowed", path)
				}
			case errors.Is(err, ErrDisallowed):
				decided++
				if path != "/private" {
					t.Errorf("GET %s disallowed: %v", path, err)
				}
			case !errors.Is(err, context.DeadlineExceeded):
				t.Errorf("GET %s: %v", path, err)
			}
		}
		if got := h.Stats().Fetches; got != 1 {
			t.Errorf("robots.txt fetched %d times for 10 requests with 2s deadlines, want once", got)
		}
		if decided < 7 {
			t.Errorf("%d of 10 requests decided, want all but those before the fetch ended (3)", decided)
		}
	})
}

// A Base that panics while a fetch has no request waiting for it: the
// panic is not lost in a goroutine nobody watches, the process goes on,
// and the next request fetches again.
func TestRobotsPanicAfterStarterLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fetches atomic.Int32
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			if fetches.Add(1) == 1 {
				time.Sleep(2 * time.Second)
				panic("boom")
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /x\n")), Request: req}, nil
		})
		r := &Robots{}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		if _, err := r.check(ctx, base, robotsReq(t, ctx, "http://a.example/x")); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("first: %v, want its deadline", err)
		}
		cancel()
		time.Sleep(2 * time.Second)
		if _, err := r.check(t.Context(), base, robotsReq(t, t.Context(), "http://a.example/x")); !errors.Is(err, ErrDisallowed) {
			t.Errorf("after the panic: %v, want a new fetch and ErrDisallowed", err)
		}
		if got := fetches.Load(); got != 2 {
			t.Errorf("%d fetches, want 2", got)
		}
	})
}

// Each origin's rules are bounded (three times the 512 KiB read), but the
// cache bounded only the origins: 16384 hostile origins of 1.5 MiB of
// rules each could hold 24 GiB. Rules now count against MaxOrigins, an
// origin more for each 4 KiB.
func TestRobotsCacheBoundsRuleBytes(t *testing.T) {
	const (
		origins = 64
		max     = 256
	)
	var rules strings.Builder
	for i := 0; rules.Len() < 400<<10; i++ {
		fmt.Fprintf(&rules, "Disallow: /%d%s\n", i, strings.Repeat("x", 60))
	}
	body := "User-agent: *\n" + rules.String()
	base := robotsRT(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	})
	r := &Robots{MaxOrigins: max}
	check := func(i int) {
		_, err := r.check(t.Context(), base, robotsReq(t, t.Context(), fmt.Sprintf("http://o%d.example/0%s", i, strings.Repeat("x", 60))))
		if !errors.Is(err, ErrDisallowed) {
			t.Fatalf("origin %d: %v, want ErrDisallowed", i, err)
		}
	}
	check(0)
	before := robotsHeap()
	for i := 1; i < origins; i++ {
		check(i)
	}
	after := robotsHeap()
	runtime.KeepAlive(r)
	grown := int64(after) - int64(before)
	t.Logf("%d origins of %d KiB of rules, MaxOrigins %d: heap grew %d KiB", origins, rules.Len()>>10, max, grown>>10)
	if limit := int64(max*5<<10 + 2*3*len(body)); grown > limit {
		t.Errorf("heap grew %d KiB, want at most %d KiB", grown>>10, limit>>10)
	}
	if c := r.robotsCache().count.Load(); c > max {
		t.Errorf("cache weight %d, over MaxOrigins %d", c, max)
	}
}

// The weight of an origin counted its rules, not its key: a host a link
// chose, of 60 KiB, weighed one origin and kept 60 KiB. Bytes kept stay
// within about 5 KiB a unit of weight, whatever the servers send.
func TestRobotsCacheWeighsKeys(t *testing.T) {
	const origins = 64
	base := robotsRT(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 404, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
	})
	r := &Robots{}
	long := strings.Repeat(strings.Repeat("a", 60)+".", 1000) // a host of about 60 KiB
	r.check(t.Context(), base, robotsReq(t, t.Context(), "http://o0.example/x"))
	before, w0 := robotsHeap(), r.robotsCache().count.Load()
	for i := 1; i <= origins; i++ {
		if _, err := r.check(t.Context(), base, robotsReq(t, t.Context(), fmt.Sprintf("http://%so%d.example/x", long, i))); err != nil {
			t.Fatal(err)
		}
	}
	after, w := robotsHeap(), r.robotsCache().count.Load()
	runtime.KeepAlive(r)
	grown := int64(after) - int64(before)
	t.Logf("%d origins of hosts of %d bytes: heap grew %d KiB, cache weight %d", origins, len(long), grown>>10, w-w0)
	if per := grown / max(w-w0, 1); per > 5<<10 {
		t.Errorf("%d bytes kept a unit of weight, want at most 5 KiB", per)
	}
}

// A Base that ended its goroutine with runtime.Goexit (t.FailNow in a
// test's RoundTripper), run in the fetch's goroutine, was neither a panic
// nor an answer: the request fetched again, and again, until its context
// ended (41,700 fetches in 200ms). Its goroutine ends too, as when Base
// ran in it.
func TestRobotsBaseGoexit(t *testing.T) {
	var fetches atomic.Int64
	base := robotsRT(func(req *http.Request) (*http.Response, error) {
		fetches.Add(1)
		runtime.Goexit()
		return nil, errors.New("unreachable")
	})
	r := &Robots{}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.check(ctx, base, robotsReq(t, ctx, "http://a.example/x"))
		t.Error("check returned after Base called runtime.Goexit")
	}()
	<-done
	if n := fetches.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times by one request whose Base called runtime.Goexit, want 1", n)
	}
}

// "Crawl-delay: 1 day" was read as one second, and Request-rate dropped
// "1/10min" and "1/1d": a unit of time longer than an hour, or written
// out, never paces an origin faster than the file asks.
func TestCrawlDelayUnitsNeverFaster(t *testing.T) {
	for _, tt := range []struct {
		line string
		want time.Duration
	}{
		{"Crawl-delay: 1 day", 24 * time.Hour},
		{"Crawl-delay: 2d", maxCrawlInterval},
		{"Crawl-delay: 1m30s", 90 * time.Second},
		{"Crawl-delay: 500ms", 500 * time.Millisecond},
		{"Crawl-delay: 10 secs", 10 * time.Second},
		{"Crawl-delay: 1 week", maxCrawlInterval},
		{"Request-rate: 1/10min", 10 * time.Minute},
		{"Request-rate: 2/30sec", 15 * time.Second},
		{"Request-rate: 1/1d", 24 * time.Hour},
		{"Request-rate: 1/5y", maxCrawlInterval},
		{"Request-rate: 1/3fortnights", 0}, // an unknown unit: unreadable
	} {
		f := parseRobots([]byte("User-agent: *\n"+tt.line+"\n"), "mybot")
		if f.interval != tt.want {
			t.Errorf("%q: interval %v, want %v", tt.line, f.interval, tt.want)
		}
	}
}

// A RobotsError quoted its rule whole: one pattern of 400 KB made every
// refusal's message, and each log line of it, 400 KB.
func TestRobotsErrorRuleBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long := "/" + strings.Repeat("a", 400<<10)
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nDisallow: " + long + "\n"})
		r := &Robots{UserAgent: "mybot"}
		_, err := r.check(t.Context(), robotsBase(h), robotsReq(t, t.Context(), "http://a.example"+long+"b"))
		var re *RobotsError
		if !errors.As(err, &re) {
			t.Fatalf("check = %v, want a *RobotsError", err)
		}
		if want := long[:maxRobotsAgent] + "…"; re.Rule != want {
			t.Errorf("Rule is %d bytes, want the first %d and …", len(re.Rule), maxRobotsAgent)
		}
		if n := len(err.Error()); n > 1<<10 {
			t.Errorf("the error's text is %d bytes, want it bounded", n)
		}
	})
}

// A Crawl-delay written in parts apart ("1m 30s", "1 min, 30 s") was read
// as its first part alone, 60 seconds where it asks for 90, or worse ("min,"
// read as no unit, and "1h30" as 1 s): the origin paced faster than the
// file asks. Each part that follows with a unit adds to it, a number
// without one counts in the unit below, and a range reads as its upper
// end.
func TestCrawlDelayInParts(t *testing.T) {
	for _, line := range []string{
		"Crawl-delay: 1m 30s",
		"Crawl-delay: 1 min 30 s",
		"Crawl-delay: 1 minute 30 seconds",
	} {
		f := parseRobots([]byte("User-agent: *\n"+line+"\n"), "mybot")
		if f.interval != 90*time.Second {
			t.Errorf("%q: interval %v, want 1m30s", line, f.interval)
		}
	}
	// A NaN, once read, took the other lines' delay with it, and the floor
	// was no floor at all.
	if f := parseRobots([]byte("User-agent: *\nCrawl-delay: 10\nCrawl-delay: 1 s 1e999\n"), "mybot"); f.interval != 10*time.Second {
		t.Errorf("Crawl-delay 10 and 1 s 1e999: interval %v, want 10s", f.interval)
	}
	for _, tt := range []struct {
		v    string
		want float64
	}{
		{"1h 30m", 5400},
		{"1h30m 15s", 5415},
		{"2 min 30 s", 150},
		{"1,000 ms 1 s", 2},
		{"1 min, 30 s", 90},
		{"1m, 30s", 90},
		{"1 h, 30 min", 5400},
		{"2 minutes, please", 120},
		{"1m 30", 90}, // a number with no unit: in the unit below
		{"1h 30 please", 5400},
		{"1h30", 5400}, // glued so too
		{"1m30", 90},
		{"2h15", 8100},
		{"10 seconds please", 10},
		{"10 seconds, 5 weekends", 10}, // below seconds: nothing
		{"5 to 10 s", 10},              // a range: its upper end
		{"1 - 2 min", 120},
		{"1 or 2 days", 2 * 86400},
		{"5 - 10", 10},
		{"1-2 min", 120}, // glued too
		{"5-10", 10},
		{"1 min to 2 min", 120},
		{"1 min - 2 min", 120},
		{"1e-3 min", 0.06},   // an exponent's sign, no range
		{"5 please 10 s", 5}, // prose after a number: the end
		{"1 s 1e999", 1},     // nothing below seconds: no NaN
		{"1 y 1e999", 365 * 86400},
		// A comma or semicolon glued to the next part: the unit was
		// taken whole ("min,30"), unknown, and the part read as seconds,
		// 1 s for 90.
		{"1 min,30 s", 90},
		{"1m,30s", 90},
		{"1min,30s", 90},
		{"1 minute,30 seconds", 90},
		{"1h;30m", 5400},
		{"1 min,30", 90},
		{"2 min,please", 120},
		{"1,5 min", 90}, // a decimal comma, as before
		// A unit Go's durations do not know, glued to the next part:
		// taken whole ("min30s"), unknown, the part was read as
		// seconds, 1 s for 90.
		{"1min30s", 90},
		{"2min30", 150},
		{"1h30min", 5400},
		{"1hr30", 5400},
		{"1d12h", 36 * 3600},
		{"1 min30 s", 90},
		{"1x30s", 1}, // an unknown unit, as before
	} {
		if got, ok := parseCrawlDelay(tt.v); !ok || got != tt.want {
			t.Errorf("parseCrawlDelay(%q) = %v, %v, want %v", tt.v, got, ok, tt.want)
		}
	}
}

// A Crawl-delay or Request-rate line between two user-agent lines ended
// the run of them: the second started a group of its own, and the rules
// after it did not hold for the first agent (/private allowed to mybot
// below). RFC 9309 §2.2.4 asks that records it does not define not
// disturb those it does, as a Sitemap line there does not; the delay
// holds for the agents named before it.
func TestCrawlDelayKeepsGroup(t *testing.T) {
	for _, rec := range []string{"Crawl-delay: 5", "Request-rate: 1/5", "Sitemap: https://a.example/s.xml"} {
		body := "User-agent: mybot\n" + rec + "\nUser-agent: *\nDisallow: /private\n"
		f := parseRobots([]byte(body), "mybot")
		if r, ok := f.matchQuery("/private/x"); !ok || r.allow {
			t.Errorf("%q: /private/x allowed to mybot (agent %q, %d rules), want the group's Disallow", body, f.agent, f.rules())
		}
		if want := 5 * time.Second; rec[0] != 'S' && f.interval != want {
			t.Errorf("%q: interval %v for mybot, want %v", body, f.interval, want)
		}
		if g := parseRobots([]byte(body), "otherbot"); rec[0] != 'S' && g.interval != 0 {
			t.Errorf("%q: interval %v for otherbot, want none (the delay was stated before *)", body, g.interval)
		}
	}
}

// A range whose ends carry their units, or joined by a mark other than a
// hyphen, with no spaces around the mark, is read as its upper end, as
// spaced ranges are: "1m-2m" read as 1 with an unknown unit (a second),
// "10~20" as 10, "10..20" as nothing. An exponent's sign is no mark (read
// as one, "0x10p-1" was read as no delay at all).
func TestCrawlDelayRangeEndsWithUnits(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want time.Duration
	}{
		{"1m-2m", 2 * time.Minute},
		{"1min-2min", 2 * time.Minute},
		{"1 min-2 min", 2 * time.Minute},
		{"10s-20s", 20 * time.Second},
		{"30s-1m", time.Minute},
		{"1–2 min", 2 * time.Minute}, // an en dash
		{"1—2 min", 2 * time.Minute}, // an em dash
		{"10~20", 20 * time.Second},
		{"10..20", 20 * time.Second},
		{"5-10", 10 * time.Second},
		{"1e-3", time.Millisecond},
		{"2.5E-1", 250 * time.Millisecond},
		{"2e-1s-1", time.Second},
		{"0x10p-1", 8 * time.Second}, // a hexadecimal float, as strconv reads it
		{"0x1P-1", 500 * time.Millisecond},
		{"1 min.-2 min.", 2 * time.Minute},
		{"1min.-2min.", 2 * time.Minute},
		{"10 sec.-20 sec.", 20 * time.Second},
		{"1 hr.-2 hrs.", 2 * time.Hour},
		{"1 Min.–2 Min.", 2 * time.Minute},
		{"10.-20.", 20 * time.Second},
		{"1.-2 min", 2 * time.Minute},
		{"10.~20", 20 * time.Second},
		{"1.e-3", time.Millisecond},
	} {
		f := parseRobots([]byte("User-agent: *\nCrawl-delay: "+tt.v+"\n"), "mybot")
		if f.interval != tt.want {
			t.Errorf("Crawl-delay: %s: interval %v, want %v (the range's upper end)", tt.v, f.interval, tt.want)
		}
	}
}
