package polite

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

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
