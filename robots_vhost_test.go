package polite

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/origin"
	"github.com/politehttp/polite/ratelimittest"
)

// The tests of a request whose Host names another authority than its
// URL's host: a crawler that dials a fixed address reaches the virtual
// host its Host names, whose robots.txt governs it (RFC 9309 §2.2).

// vhostRobots returns a handler that serves robots.txt by Host (the
// default for any other), "ok" for any other path, and counts the
// robots.txt fetches of each Host and the requests of each Host and path.
func vhostRobots(files map[string]string, def string) (http.Handler, func(string) int, func(string) int) {
	var mu sync.Mutex
	fetches, hits := map[string]int{}, map[string]int{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			fetches[r.Host]++
			body, ok := files[r.Host]
			if !ok {
				body = def
			}
			io.WriteString(w, body)
			return
		}
		hits[r.Host+r.URL.Path]++
		io.WriteString(w, "ok")
	})
	count := func(m map[string]int) func(string) int {
		return func(k string) int {
			mu.Lock()
			defer mu.Unlock()
			return m[k]
		}
	}
	return h, count(fetches), count(hits)
}

// TestRobotsVirtualHost: the URL's host an address, req.Host the site.
// The request goes to the site's virtual host: the site's robots.txt, not
// the one the bare address serves, decides it. Before, robots.txt was
// fetched without the Host, the default site's allowed every path, and the
// request reached site.example/private, which its robots.txt disallows.
func TestRobotsVirtualHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var private atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				if r.Host == "site.example" {
					io.WriteString(w, "User-agent: *\nDisallow: /private\n")
				} else {
					io.WriteString(w, "User-agent: *\nAllow: /\n") // the default vhost
				}
				return
			}
			if r.Host == "site.example" && r.URL.Path == "/private" {
				private.Add(1)
			}
			io.WriteString(w, "ok")
		})
		tr := &Transport{Base: &ratelimittest.Transport{Handler: h}, Robots: &Robots{UserAgent: "mybot"}}
		req := robotsReq(t, t.Context(), "http://192.0.2.10/private")
		req.Host = "site.example"
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		if n := private.Load(); n != 0 || !errors.Is(err, ErrDisallowed) {
			t.Errorf("site.example's robots.txt disallows /private, but the request was sent (%d times, err %v)", n, err)
		}
	})
}

// Two virtual hosts on one address, and the address itself, have a
// robots.txt each, fetched once each with their own Host, and a
// RobotsError names the Host. A Host that is the URL's host in another
// spelling is the URL's origin.
func TestRobotsVirtualHostsApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, fetches, _ := vhostRobots(map[string]string{
			"a.example": "User-agent: *\nDisallow: /a\n",
			"b.example": "User-agent: *\nDisallow: /b\n",
		}, "User-agent: *\nDisallow: /default\n")
		base := robotsBase(h)
		r := &Robots{UserAgent: "mybot"}
		check := func(host, path string) error {
			req := robotsReq(t, t.Context(), "http://192.0.2.10"+path)
			if host != "" {
				req.Host = host
			}
			_, err := r.check(t.Context(), base, req)
			return err
		}
		for range 2 {
			for _, tt := range []struct {
				host, path string
				allowed    bool
			}{
				{"a.example", "/a", false},
				{"a.example", "/b", true},
				{"A.Example.:80", "/a", false}, // a.example, spelt otherwise
				{"b.example", "/a", true},
				{"b.example", "/b", false},
				{"", "/a", true},
				{"", "/default", false},
				{"192.0.2.10:80", "/default", false}, // the URL's host
			} {
				err := check(tt.host, tt.path)
				if tt.allowed != (err == nil) {
					t.Errorf("Host %q, %s: check = %v, want allowed %v", tt.host, tt.path, err, tt.allowed)
				}
				var rerr *RobotsError
				if err != nil && errors.As(err, &rerr) {
					want := origin.Normal("http", tt.host)
					if want == "192.0.2.10" {
						want = ""
					}
					if rerr.Origin != "http://192.0.2.10" || rerr.Host != want {
						t.Errorf("Host %q: RobotsError Origin %q Host %q, want http://192.0.2.10 and %q", tt.host, rerr.Origin, rerr.Host, want)
					}
					if want != "" && !strings.Contains(err.Error(), "http://192.0.2.10 (Host "+want+")") {
						t.Errorf("Host %q: error %q does not name the Host", tt.host, err)
					}
				}
			}
		}
		for _, host := range []string{"a.example", "b.example", "192.0.2.10"} {
			if n := fetches(host); n != 1 {
				t.Errorf("robots.txt fetched %d times with Host %s, want once", n, host)
			}
		}
	})
}

// A Host with userinfo, a path or a query is no host: net/http sends none
// of it, and none of it reaches a RobotsError, a robots.txt fetch or a key:
// the request is the URL's origin's.
func TestRobotsVirtualHostNotAHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var hosts []string
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			hosts = append(hosts, req.Host)
			return &http.Response{StatusCode: 503, Header: http.Header{}, Request: req, Body: http.NoBody}, nil
		})
		r := &Robots{}
		for _, host := range []string{"user:secret@site.example", "site.example/?token=secret", "site.example?token=secret", "site example secret"} {
			req := robotsReq(t, t.Context(), "http://192.0.2.10/x")
			req.Host = host
			_, err := r.check(t.Context(), base, req)
			var rerr *RobotsError
			if !errors.As(err, &rerr) || !rerr.Unreachable {
				t.Fatalf("Host %q: check = %v, want robots.txt unreachable", host, err)
			}
			if rerr.Host != "" || strings.Contains(err.Error(), "secret") {
				t.Errorf("Host %q: RobotsError Host %q, message %q; want neither to quote it", host, rerr.Host, err)
			}
		}
		if len(hosts) != 1 || hosts[0] != "192.0.2.10" {
			t.Errorf("robots.txt fetched with Hosts %q, want once, with the URL's host", hosts)
		}
	})
}

// A redirect of a virtual host's robots.txt keeps the Host while its
// Location names no host, as http.Client keeps it, and drops it for one
// that names a host.
func TestRobotsVirtualHostRedirect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []string
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			got = append(got, req.Host+" "+req.URL.String())
			resp := &http.Response{StatusCode: 301, Header: http.Header{}, Request: req, Body: http.NoBody}
			switch req.URL.Path {
			case "/robots.txt":
				resp.Header.Set("Location", "/moved.txt")
			case "/moved.txt":
				resp.Header.Set("Location", "http://cdn.example/site/robots.txt")
			default:
				resp.StatusCode = 200
				resp.Body = io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /\n"))
			}
			return resp, nil
		})
		req := robotsReq(t, t.Context(), "http://192.0.2.10/x")
		req.Host = "site.example"
		if _, err := (&Robots{}).check(t.Context(), base, req); !errors.Is(err, ErrDisallowed) {
			t.Errorf("check = %v, want disallowed", err)
		}
		want := []string{
			"site.example http://192.0.2.10/robots.txt",
			"site.example http://192.0.2.10/moved.txt",
			"cdn.example http://cdn.example/site/robots.txt",
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("fetched (Host URL) %q, want %q", got, want)
		}
	})
}

// Each virtual host counts against MaxOrigins as an origin.
func TestRobotsVirtualHostsMaxOrigins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _, _ := vhostRobots(nil, "User-agent: *\nAllow: /\n")
		r := &Robots{MaxOrigins: 8}
		for i := range 100 {
			req := robotsReq(t, t.Context(), "http://192.0.2.10/")
			req.Host = fmt.Sprintf("v%d.example", i)
			r.check(t.Context(), robotsBase(h), req)
		}
		kept := 0
		for i := range r.cache.shards {
			kept += len(r.cache.shards[i].m)
		}
		if kept > 8 || r.cache.count.Load() > 8 {
			t.Errorf("MaxOrigins 8: %d entries kept, weighing %d", kept, r.cache.count.Load())
		}
	})
}

// The Crawl-delay of a virtual host's robots.txt paces that site, not the
// address: a.example asks 10 s, b.example on the same address nothing.
// b.example's requests do not wait for a.example's floor, nor lift it.
func TestRobotsVirtualHostCrawlDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _, _ := vhostRobots(map[string]string{"a.example": "User-agent: *\nCrawl-delay: 10\n"}, "User-agent: *\nAllow: /\n")
		var mu sync.Mutex
		arrivals := map[string][]time.Time{}
		rec := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/robots.txt" {
				mu.Lock()
				arrivals[r.Host] = append(arrivals[r.Host], time.Now())
				mu.Unlock()
			}
			h.ServeHTTP(w, r)
		})
		tr := &Transport{Base: &ratelimittest.Transport{Handler: rec}, Robots: &Robots{UserAgent: "mybot"}}
		get := func(host, path string) {
			req := robotsReq(t, t.Context(), "http://192.0.2.10"+path)
			req.Host = host
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		start := time.Now()
		get("a.example", "/0") // t=0; the next start to a.example at t=10
		var wg sync.WaitGroup
		wg.Go(func() { get("a.example", "/1") })
		synctest.Wait() // held until t=10
		for i := range 5 {
			get("b.example", fmt.Sprint("/", i)) // at once, its floor 0 written
		}
		wg.Go(func() { get("a.example", "/2") })
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, at := range arrivals["b.example"] {
			if d := at.Sub(start); d != 0 {
				t.Errorf("b.example asks no Crawl-delay, but a request to it waited %v", d)
			}
		}
		a := arrivals["a.example"]
		if len(a) != 3 || mostWithin(a, 10*time.Second) > 1 {
			t.Errorf("Crawl-delay 10: a.example reached at %v, want 3 times, 10 s apart", a)
		}
	})
}

// A request whose URL.Opaque is an absolute URL naming the site, with no
// Host (as a request built as a struct literal has it), is the site's as
// one whose Host names it: the site's Crawl-delay spaces its requests
// whatever address they are sent to.
func TestRobotsOpaqueSiteCrawlDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var arrivals []time.Time
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				io.WriteString(w, "User-agent: *\nCrawl-delay: 10\n")
				return
			}
			mu.Lock()
			arrivals = append(arrivals, time.Now())
			mu.Unlock()
		})
		tr := &Transport{Base: &ratelimittest.Transport{Handler: h}, Robots: &Robots{UserAgent: "mybot"}}
		for i, addr := range []string{"192.0.2.10", "192.0.2.11", "192.0.2.10"} {
			req := robotsReq(t, t.Context(), "http://"+addr+"/")
			req.URL = &url.URL{Scheme: "http", Host: addr, Opaque: fmt.Sprint("//site.example/", i)}
			req.Host = ""
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if mostWithin(arrivals, 10*time.Second) > 1 {
			t.Errorf("Crawl-delay 10: site.example reached at %v through two addresses, want 10 s apart", arrivals)
		}
	})
}
