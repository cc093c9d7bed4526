package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A password given in the URL's user information is a credential as one
// given with -H 'Authorization: Basic …' is: net/http sends it as exactly
// that header. Decoded and echoed by the server (here in a policy's name),
// it is shown as "…" in the text and the JSON reports alike, as one -H
// carried is (TestInspectEchoBasicDecoded): what inspect prints never
// holds a credential.
func TestInspectEchoUserinfoPassword(t *testing.T) {
	const password = "hunter2-4f9a1c2e7b"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, p, _ := r.BasicAuth()
		w.Header().Set("RateLimit-Policy", `"`+p+`";q=10;w=60`)
	}))
	defer srv.Close()
	withUser := strings.Replace(srv.URL, "http://", "http://alice:"+password+"@", 1) + "/"
	for _, json := range []bool{false, true} {
		args := []string{withUser}
		if json {
			args = append([]string{"-json"}, args...)
		}
		var stdout, stderr bytes.Buffer
		if err := runInspect(t.Context(), args, &stdout, &stderr); err != nil {
			t.Fatalf("runInspect = %v; stderr:\n%s", err, stderr.String())
		}
		if out := stdout.String() + stderr.String(); strings.Contains(out, password) {
			t.Errorf("json %v: the URL's password the server echoed is shown:\n%s", json, out)
		}
	}
}

// The same for the Authorization net/http builds from the user
// information, echoed whole (base64), as a server that echoes the
// Authorization it got does (TestInspectElidesEchoedCredential's, for -H).
func TestInspectEchoUserinfoAuthorization(t *testing.T) {
	const password = "hunter2-4f9a1c2e7b"
	var sent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent = strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
		w.Header().Set("RateLimit-Policy", `"`+sent+`";q=10;w=60`)
	}))
	defer srv.Close()
	withUser := strings.Replace(srv.URL, "http://", "http://alice:"+password+"@", 1) + "/"
	var stdout, stderr bytes.Buffer
	if err := runInspect(t.Context(), []string{withUser}, &stdout, &stderr); err != nil {
		t.Fatalf("runInspect = %v; stderr:\n%s", err, stderr.String())
	}
	if sent == "" {
		t.Fatal("net/http sent no Authorization")
	}
	if out := stdout.String() + stderr.String(); strings.Contains(out, sent) {
		t.Errorf("the Basic credential (%s) net/http built from the URL's password, echoed by the server, is shown:\n%s", sent, out)
	}
}

// get's records elide the same: a password the URL carried, echoed into
// a redirect's Location, is shown as "…" in the record's error, as the
// URL itself is shown without its user information.
func TestGetEchoUserinfoPasswordInRedirect(t *testing.T) {
	const password = "hunter2-4f9a1c2e7b"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, p, _ := r.BasicAuth()
		http.Redirect(w, r, "http://127.0.0.1:1/"+p, http.StatusFound)
	}))
	defer srv.Close()
	withUser := strings.Replace(srv.URL, "http://", "http://alice:"+password+"@", 1) + "/"
	var stdout, stderr bytes.Buffer
	err := getMain(t.Context(), []string{"-max-attempts", "1", withUser}, strings.NewReader(""), &stdout, &stderr)
	if err == nil {
		t.Fatalf("getMain = nil, want a failed URL; stderr:\n%s", stderr.String())
	}
	if out := err.Error() + stdout.String() + stderr.String(); strings.Contains(out, password) {
		t.Errorf("the record shows the URL's password the server echoed:\n%s", out)
	}
}
