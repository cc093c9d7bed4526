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

// referersAfterRedirect runs polite cmd with args on the URL path of a
// server that redirects it to to(the server's URL, another server's URL)
// + "/landing", and returns the Referer values each request to /landing
// carried.
func referersAfterRedirect(t *testing.T, to func(self, other string) string, cmd, path string, args ...string) [][]string {
	t.Helper()
	var mu sync.Mutex
	var refs [][]string
	landing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/landing" {
			mu.Lock()
			refs = append(refs, r.Header.Values("Referer"))
			mu.Unlock()
		}
	})
	other := httptest.NewServer(landing)
	defer other.Close()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/landing" {
			landing(w, r)
			return
		}
		http.Redirect(w, r, to(srv.URL, other.URL)+"/landing", http.StatusFound)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), append(append([]string{cmd}, args...), srv.URL+path), &stdout, &stderr)
	mu.Lock()
	defer mu.Unlock()
	if len(refs) == 0 {
		t.Fatalf("polite %s %q (exit %d): the redirect was not followed; stderr: %s", cmd, args, code, stderr.String())
	}
	return refs
}

// The redirect targets of the tests below.
var (
	sameHost  = func(self, _ string) string { return self }
	otherPort = func(_, other string) string { return other }
	otherHost = func(_, other string) string {
		// Another host for net/http's rules: localhost, not 127.0.0.1.
		return strings.Replace(other, "127.0.0.1", "localhost", 1)
	}
)

// A redirect to another host carried the URL it came from as its
// Referer, query included, so a key given in the query (?api_key=...)
// reached the other host, as the headers -H gives no longer did; and the
// first fix dropped it only for another host name, so that another server
// on another port of the same host received it.
func TestRefererDroppedOnRedirectToOtherHost(t *testing.T) {
	const secret = "sk-referer-secret"
	for _, to := range []struct {
		name string
		f    func(self, other string) string
	}{{"another host", otherHost}, {"another port", otherPort}} {
		for _, cmd := range []string{"inspect", "get"} {
			for _, v := range referersAfterRedirect(t, to.f, cmd, "/v1?api_key="+secret) {
				if len(v) > 0 {
					t.Errorf("polite %s, redirect to %s: Referer %q", cmd, to.name, v)
				}
			}
		}
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
// redirect. And whether one was given read only the first -H Referer:
// with -H 'Referer:' before one with a value, net/http's went on a
// redirect to the same host in place of the one given.
func TestRefererOnRedirectIsTheOneGiven(t *testing.T) {
	const want = "https://app.example/"
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"-H", "Referer:"}, nil},
		{[]string{"-H", "Referer: " + want, "-H", "Referer:"}, []string{want}},
		{[]string{"-H", "Referer:", "-H", "Referer: " + want}, []string{want}},
	} {
		for _, v := range referersAfterRedirect(t, sameHost, "inspect", "/v1?api_key=sk-empty-referer", tt.args...) {
			if !slices.Equal(v, tt.want) {
				t.Errorf("%q: the redirect carried Referer %q, want %q", tt.args, v, tt.want)
			}
		}
	}
}
