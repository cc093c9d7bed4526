package polite

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// opaqueSite is a loopback server whose robots.txt disallows /private
// and /?x to the sites site accepts (every path allowed to the others), with a
// Transport that obeys it, recording the host and request-target of
// everything else it serves.
type opaqueSite struct {
	srv    *httptest.Server
	tr     *Transport
	mu     sync.Mutex
	served []string
}

func newOpaqueSite(t *testing.T, site func(host string) bool) *opaqueSite {
	o := &opaqueSite{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if site(r.Host) {
				w.Write([]byte("User-agent: *\nDisallow: /private\nDisallow: /?x\n"))
				return
			}
			http.NotFound(w, r)
			return
		}
		o.mu.Lock()
		o.served = append(o.served, r.Host+" "+r.RequestURI)
		o.mu.Unlock()
	}))
	t.Cleanup(o.srv.Close)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	o.tr = &Transport{Base: base, Robots: &Robots{}}
	return o
}

// get sends a GET to the server's address, with opaque as its URL's Opaque
// ("/private" when empty) and host as its Host (none when empty).
func (o *opaqueSite) get(t *testing.T, opaque, host string) error {
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, o.srv.URL+"/private", nil)
	if opaque != "" {
		req.URL = &url.URL{Scheme: "http", Host: req.URL.Host, Opaque: opaque}
	}
	req.Host = host
	resp, err := o.tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// check checks that err, of a request of opaque, is ErrDisallowed.
func (o *opaqueSite) check(t *testing.T, err error, opaque string) {
	t.Helper()
	if !errors.Is(err, ErrDisallowed) {
		o.mu.Lock()
		defer o.mu.Unlock()
		t.Errorf("Opaque %q: RoundTrip = %v, want ErrDisallowed by the site's Disallow: /private; the server served %q", opaque, err, o.served)
	}
}

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
	o := newOpaqueSite(t, func(h string) bool { return h == "site.example" })
	// The same site reached by its Host: refused, as documented.
	o.check(t, o.get(t, "", "site.example"), "")
	// Reached by the authority of an absolute-form request-target.
	o.check(t, o.get(t, "//site.example/private", ""), "//site.example/private")
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
			o := newOpaqueSite(t, func(h string) bool { return h == "site.example" })
			o.check(t, o.get(t, opaque, "site.example"), opaque)
		})
	}
}

// An Opaque absolute URL whose authority is percent-encoded, as
// url.URL.String writes an internationalised host
// ("http://%C3%A9.example/private"), reaches the host the server decodes
// ("é.example": Go's server unescapes the request-target's host). Its
// robots.txt was fetched with Host "%c3%a9.example", the escaped text,
// which names no site; the path é.example disallows was served.
func TestOpaqueEscapedAuthorityObeysItsRobots(t *testing.T) {
	o := newOpaqueSite(t, func(h string) bool { return h == "é.example" || h == "xn--9ca.example" })
	// The same site by its Host: refused, as documented.
	o.check(t, o.get(t, "", "é.example"), "")
	site := &url.URL{Scheme: "http", Host: "é.example", Path: "/private"}
	for _, opaque := range []string{site.String(), "//%C3%A9.example/private"} {
		o.check(t, o.get(t, opaque, ""), opaque)
	}
}

// An Opaque "http:/private" (an absolute URI with no authority) is sent by
// net/http as the request-target "http:/private", whose path Go's server
// reads as "/private", at the site of the Host field. robots.txt matched
// "http:/private", which no rule starting with '/' matches, and the path
// the site disallows was served.
func TestOpaqueSchemePathObeysRobots(t *testing.T) {
	o := newOpaqueSite(t, func(string) bool { return true })
	for _, opaque := range []string{"http:/private", "HTTP:/private/x"} {
		o.check(t, o.get(t, opaque, ""), opaque)
	}
}

// An Opaque "http:?x=1" (a scheme, no authority, no path, a query) is sent
// by net/http as the request-target "http:?x=1", which Go's server reads
// as the empty path with the query "x=1": "/?x=1" as robots.txt matches
// it. sentPath gave "" for it (what follows the scheme does not start with
// '/'), and robotsPath "/": the query was dropped, and a rule
// "Disallow: /?x" did not refuse it.
func TestOpaqueSchemeQueryObeysRobots(t *testing.T) {
	for opaque, want := range map[string]string{
		"http:?x=1":           "/?x=1",
		"http:p?x=1":          "/?x=1",
		"//a.test?x=/private": "/?x=/private",
		"http://a.test?x=1":   "/?x=1",
	} {
		u := &url.URL{Scheme: "http", Host: "a.test", Opaque: opaque}
		if got := robotsPath(u); got != want {
			t.Errorf("robotsPath(Opaque %q) = %q, want %q", opaque, got, want)
		}
	}
	o := newOpaqueSite(t, func(string) bool { return true })
	o.check(t, o.get(t, "http:?x=1", ""), "http:?x=1")
}
