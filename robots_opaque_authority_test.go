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
