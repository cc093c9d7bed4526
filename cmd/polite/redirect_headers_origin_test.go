package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// The headers -H gives were dropped on a redirect to another host name,
// but sent to another port of the same host: another origin, another
// server. The Referer (which may hold an api_key from the query) was no
// longer sent there (TestRefererDroppedOnRedirectToOtherHost, "another
// port"), yet the same key given as -H 'X-Api-Key: …' or an
// Authorization still reached it.
func TestHeadersDroppedOnRedirectToOtherPort(t *testing.T) {
	const secret = "sk-other-port-secret"
	var mu sync.Mutex
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		for _, name := range []string{"X-Api-Key", "Authorization"} {
			if v := r.Header.Get(name); v != "" {
				leaked = append(leaked, name+": "+v)
			}
		}
	}))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/landing", http.StatusFound) // 127.0.0.1, another port
	}))
	defer api.Close()
	for _, cmd := range []string{"inspect", "get"} {
		mu.Lock()
		leaked = nil
		mu.Unlock()
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{cmd, "-H", "X-Api-Key: " + secret, "-H", "Authorization: Bearer " + secret, api.URL + "/v1"}, &stdout, &stderr)
		mu.Lock()
		if len(leaked) > 0 {
			t.Errorf("polite %s (exit %d): the server on another port %s received %q", cmd, code, other.URL, leaked)
		}
		mu.Unlock()
	}
}

// By the same comparison of host names alone, a redirect from https:// to
// http:// on the same host kept the -H headers, sent then in the clear.
// The origin is the scheme, host and port, a default port written or not.
func TestCheckRedirectComparesOrigins(t *testing.T) {
	h := headerFlag{"X-Api-Key: sk-origin-secret", "User-Agent: agent/1"}
	for _, tt := range []struct {
		from, to string
		kept     bool
	}{
		{"https://api.example/v1", "https://api.example/v2", true},
		{"https://api.example/v1", "https://API.example:443/v2", true},
		{"http://api.example:80/v1", "http://api.example/v2", true},
		{"https://api.example/v1", "http://api.example/v2", false},
		{"https://api.example/v1", "https://api.example:8443/v2", false},
		{"http://127.0.0.1:8080/v1", "http://127.0.0.1:8081/v2", false},
		{"https://api.example/v1", "https://other.example/v2", false},
	} {
		first, _ := http.NewRequest(http.MethodGet, tt.from, nil)
		req, _ := http.NewRequest(http.MethodGet, tt.to, nil)
		h.apply(req.Header, &req.Host)
		if err := h.checkRedirect(req, []*http.Request{first}); err != nil {
			t.Fatal(err)
		}
		if kept := req.Header.Get("X-Api-Key") != ""; kept != tt.kept {
			t.Errorf("redirect %s → %s: -H X-Api-Key kept %v, want %v", tt.from, tt.to, kept, tt.kept)
		}
		if req.Header.Get("User-Agent") == "" {
			t.Errorf("redirect %s → %s: -H User-Agent dropped", tt.from, tt.to)
		}
	}
}
