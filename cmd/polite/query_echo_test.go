package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// An API key given in the URL's query is a credential the request carried,
// as much as one given with -H or in the userinfo: inspect elides the query
// from every URL it prints, and, where the server echoes the key (in a
// policy's name, a problem document's title), the key too. Before, the
// report printed it whole there.
func TestInspectElidesEchoedQueryKey(t *testing.T) {
	const secret = "sk-live-4f9a1c2e7b"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Query().Get("api_key")
		w.Header().Set("X-RateLimit-Resource", key)
		w.Header().Set("X-RateLimit-Limit", "10")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"title":"too many for key ` + key + `"}`))
	}))
	defer srv.Close()

	for _, json := range []bool{false, true} {
		args := []string{srv.URL + "/v1/search?api_key=" + secret}
		if json {
			args = append([]string{"-json"}, args...)
		}
		if out := inspectOutput(t, args...); strings.Contains(out, secret) {
			t.Errorf("json %v: the output shows the query's API key the server echoed:\n%s", json, out)
		}
	}
}

// get alike: a server that redirects to a URL built from the query's API
// key (to an address that fails) has the key elided from the record's
// error; before, it was printed.
func TestGetElidesEchoedQueryKey(t *testing.T) {
	const secret = "sk-live-4f9a1c2e7b"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/keys/"+r.URL.Query().Get("api_key"), http.StatusFound)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	err := getMain(t.Context(), []string{"-max-attempts", "1", srv.URL + "/?api_key=" + secret}, strings.NewReader(""), &stdout, &stderr)
	out := stdout.String() + stderr.String()
	if err != nil {
		out += err.Error()
	}
	if strings.Contains(out, secret) {
		t.Errorf("the record shows the query's API key the server echoed:\n%s", out)
	}
}
