package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A redirect to another host did not carry the first URL in a Referer:
// net/http sets one, query included, so a key given in the query
// (?api_key=...) reached the other host, as the headers -H gives no
// longer did.
func TestRefererDroppedOnRedirectToOtherHost(t *testing.T) {
	const secret = "sk-referer-secret"
	var mu sync.Mutex
	var referers []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		referers = append(referers, r.Header.Get("Referer"))
	}))
	defer other.Close()
	// Another host for net/http's rules: localhost, not 127.0.0.1.
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherURL+"/landing", http.StatusFound)
	}))
	defer api.Close()
	for _, cmd := range []string{"inspect", "get"} {
		mu.Lock()
		referers = nil
		mu.Unlock()
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{cmd, api.URL + "/v1?api_key=" + secret}, &stdout, &stderr)
		mu.Lock()
		if len(referers) == 0 {
			t.Errorf("polite %s (exit %d): the redirect was not followed; stderr: %s", cmd, code, stderr.String())
		}
		for _, ref := range referers {
			if ref != "" {
				t.Errorf("polite %s (exit %d): the other host %s received Referer %q", cmd, code, otherURL, ref)
			}
		}
		mu.Unlock()
	}
}
