package polite

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// A request whose URL.Opaque is an absolute URL naming another authority
// than its URL's host ("//site.example/private" on http://127.0.0.1:port)
// is sent by net/http in absolute-form, "GET http://site.example/private",
// and a server takes the authority of that request-target, not the Host
// field (RFC 9112 §3.2.2: it "MUST ignore the received Host header field
// ... and instead use the host information of the request-target"; Go's
// server sets Request.Host so). The request reaches site.example's virtual
// host, whose robots.txt governs it (RFC 9309 §2.2; DESIGN.md §9: "The
// origin is the authority the request reaches"), as for a request whose
// Host names it, which is refused. It was decided by the robots.txt the
// bare address serves, and a path site.example disallows was served.
func TestOpaqueAuthorityObeysItsRobots(t *testing.T) {
	var mu sync.Mutex
	var served []string // host and path of what the server served, robots.txt aside
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if r.Host == "site.example" {
				w.Write([]byte("User-agent: *\nDisallow: /private\n"))
				return
			}
			http.NotFound(w, r) // the address itself: every path allowed
			return
		}
		mu.Lock()
		served = append(served, r.Host+r.URL.Path)
		mu.Unlock()
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &Transport{Base: base, Robots: &Robots{}}
	addr, _ := url.Parse(srv.URL)

	// The same site reached by its Host: refused, as documented.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/private", nil)
	req.Host = "site.example"
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
		t.Fatalf("Host site.example: RoundTrip sent /private; want ErrDisallowed")
	}

	// Reached by the authority of an absolute-form request-target.
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/", nil)
	req.URL = &url.URL{Scheme: "http", Host: addr.Host, Opaque: "//site.example/private"}
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if !errors.Is(err, ErrDisallowed) {
		t.Errorf("request-target %q (sent to %s): RoundTrip = %v, want ErrDisallowed by site.example's Disallow: /private; the server served %q",
			req.URL.RequestURI(), addr.Host, err, served)
	}
}

// An Opaque absolute URL whose authority is empty ("///private", sent by
// net/http as "GET http:///private") names no host: a server then takes
// the Host field (Go's server sets Request.Host from it when the
// request-target's host is empty). robotsHost read the empty authority in
// place of req.Host, so the request was decided by the robots.txt of the
// bare address, not of the site its Host names, and reached a path that
// site disallows.
func TestOpaqueEmptyAuthorityKeepsHost(t *testing.T) {
	for _, opaque := range []string{"///private", "http:///private", "//user@/private"} {
		t.Run(opaque, func(t *testing.T) {
			var mu sync.Mutex
			var served []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					if r.Host == "site.example" {
						w.Write([]byte("User-agent: *\nDisallow: /private\n"))
						return
					}
					http.NotFound(w, r)
					return
				}
				mu.Lock()
				served = append(served, r.Host+" "+r.RequestURI)
				mu.Unlock()
			}))
			defer srv.Close()
			base := &http.Transport{}
			defer base.CloseIdleConnections()
			tr := &Transport{Base: base, Robots: &Robots{}}
			addr, _ := url.Parse(srv.URL)

			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/", nil)
			req.URL = &url.URL{Scheme: "http", Host: addr.Host, Opaque: opaque}
			req.Host = "site.example"
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			if !errors.Is(err, ErrDisallowed) {
				t.Errorf("Opaque %q, Host site.example: RoundTrip = %v, want ErrDisallowed by site.example's Disallow: /private; the server served %q",
					opaque, err, served)
			}
		})
	}
}

// opaqueRobotsServer serves robots.txt disallowing /private to the site
// site(host) accepts, and records host and path of everything else it serves.
func opaqueRobotsServer(t *testing.T, site func(host string) bool) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var served []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if site(r.Host) {
				w.Write([]byte("User-agent: *\nDisallow: /private\n"))
				return
			}
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		served = append(served, r.Host+" "+r.URL.Path)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), served...) }
}

// An Opaque absolute URL whose authority is percent-encoded, as
// url.URL.String writes an internationalised host
// ("http://%C3%A9.example/private"), reaches the host the server decodes
// ("é.example": Go's server unescapes the request-target's host). Its
// robots.txt was fetched with Host "%c3%a9.example", the escaped text,
// which names no site; the path é.example disallows was served.
func TestOpaqueEscapedAuthorityObeysItsRobots(t *testing.T) {
	srv, served := opaqueRobotsServer(t, func(h string) bool { return h == "é.example" || h == "xn--9ca.example" })
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &Transport{Base: base, Robots: &Robots{}}
	addr, _ := url.Parse(srv.URL)

	// The same site by its Host: refused, as documented.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/private", nil)
	req.Host = "é.example"
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
		t.Fatalf("Host é.example: RoundTrip sent /private; want ErrDisallowed")
	}

	site := &url.URL{Scheme: "http", Host: "é.example", Path: "/private"}
	for _, opaque := range []string{site.String(), "//%C3%A9.example/private"} {
		req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/", nil)
		req.URL = &url.URL{Scheme: "http", Host: addr.Host, Opaque: opaque}
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, ErrDisallowed) {
			t.Errorf("Opaque %q: RoundTrip = %v, want ErrDisallowed by é.example's robots.txt; the server served %q", opaque, err, served())
		}
	}
}

// An Opaque "http:/private" (an absolute URI with no authority) is sent by
// net/http as the request-target "http:/private", whose path Go's server
// reads as "/private", at the site of the Host field. robots.txt matched
// "http:/private", which no rule starting with '/' matches, and the path
// the site disallows was served.
func TestOpaqueSchemePathObeysRobots(t *testing.T) {
	srv, served := opaqueRobotsServer(t, func(string) bool { return true })
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &Transport{Base: base, Robots: &Robots{}}
	addr, _ := url.Parse(srv.URL)
	for _, opaque := range []string{"http:/private", "HTTP:/private/x"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/", nil)
		req.URL = &url.URL{Scheme: "http", Host: addr.Host, Opaque: opaque}
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, ErrDisallowed) {
			t.Errorf("Opaque %q: RoundTrip = %v, want ErrDisallowed by Disallow: /private; the server served %q", opaque, err, served())
		}
	}
}
