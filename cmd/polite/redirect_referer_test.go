package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
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

// The first fix dropped the Referer only on a redirect to another host
// name: another server on another port of the same host received the
// query.
func TestRefererDroppedOnRedirectToOtherPort(t *testing.T) {
	const secret = "sk-port-secret"
	var mu sync.Mutex
	var referers []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		referers = append(referers, r.Header.Get("Referer"))
	}))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/landing", http.StatusFound)
	}))
	defer api.Close()
	for _, cmd := range []string{"inspect", "get"} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{cmd, api.URL + "/v1?api_key=" + secret}, &stdout, &stderr)
		mu.Lock()
		if len(referers) == 0 {
			t.Errorf("polite %s (exit %d): the redirect was not followed; stderr: %s", cmd, code, stderr.String())
		}
		for _, ref := range referers {
			if strings.Contains(ref, secret) {
				t.Errorf("polite %s: the server on another port received Referer %q", cmd, ref)
			}
		}
		referers = nil
		mu.Unlock()
	}
}

// On a chain from the first host to another and back, the headers given
// with -H came back on the request the other host chose; net/http does
// not restore Authorization so, and neither does polite now.
func TestHeadersNotRestoredAfterOtherHost(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	var bURL string
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, bURL+"/bounce", http.StatusFound)
			return
		}
		mu.Lock()
		keys = append(keys, r.URL.Path+" key="+r.Header.Get("X-Api-Key"))
		mu.Unlock()
	}))
	defer a.Close()
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, a.URL+"/chosen-by-b", http.StatusFound)
	}))
	defer b.Close()
	// Another host for net/http's rules: localhost, not 127.0.0.1.
	bURL = strings.Replace(b.URL, "127.0.0.1", "localhost", 1)
	for _, cmd := range []string{"inspect", "get"} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{cmd, "-H", "X-Api-Key: sk-aba", a.URL + "/start"}, &stdout, &stderr)
		mu.Lock()
		if len(keys) == 0 {
			t.Errorf("polite %s (exit %d): the chain was not followed; stderr: %s", cmd, code, stderr.String())
		}
		for _, k := range keys {
			if strings.HasSuffix(k, "sk-aba") {
				t.Errorf("polite %s: after a hop to another host, the first host received %s", cmd, k)
			}
		}
		keys = nil
		mu.Unlock()
	}
}

// An -H 'Referer:' with no value, curl's way of asking that none be sent,
// was taken for a Referer given: net/http's, with the query, went on a
// redirect.
func TestEmptyRefererFlagSendsNone(t *testing.T) {
	const secret = "sk-empty-referer"
	var mu sync.Mutex
	var referers []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1" {
			http.Redirect(w, r, "/landing", http.StatusFound)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		referers = append(referers, r.Header.Get("Referer"))
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"inspect", "-H", "Referer:", srv.URL + "/v1?api_key=" + secret}, &stdout, &stderr)
	mu.Lock()
	defer mu.Unlock()
	if len(referers) == 0 {
		t.Fatalf("exit %d: the redirect was not followed; stderr: %s", code, stderr.String())
	}
	for _, ref := range referers {
		if ref != "" {
			t.Errorf("the redirect carried Referer %q", ref)
		}
	}
}

// Whether a Referer was given read only the first -H Referer: with
// -H 'Referer:' before one with a value, the Referer sent on the first
// request was dropped on a redirect to the same host.
func TestGivenRefererKeptOnSameHostRedirect(t *testing.T) {
	const want = "https://app.example/"
	var mu sync.Mutex
	var refs [][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1" {
			http.Redirect(w, r, "/landing", http.StatusFound)
			return
		}
		mu.Lock()
		refs = append(refs, r.Header.Values("Referer"))
		mu.Unlock()
	}))
	defer srv.Close()
	for _, flags := range [][]string{
		{"-H", "Referer: " + want, "-H", "Referer:"},
		{"-H", "Referer:", "-H", "Referer: " + want},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), append(append([]string{"inspect"}, flags...), srv.URL+"/v1"), &stdout, &stderr)
		mu.Lock()
		if len(refs) == 0 {
			t.Errorf("%q (exit %d): the redirect was not followed; stderr: %s", flags, code, stderr.String())
		}
		for _, v := range refs {
			if !slices.Contains(v, want) {
				t.Errorf("%q: the redirect to the same host carried Referer %q, want %q among them", flags, v, want)
			}
		}
		refs = nil
		mu.Unlock()
	}
}
