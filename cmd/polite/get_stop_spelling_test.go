package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/politehttp/polite"
)

// After an origin reports abnormal usage (polite.EventStop), get sends it
// nothing more (TestGetStopsOrigin). An origin's host is case-insensitive
// (RFC 3986 §3.2.2; sameOrigin and the Transport's budget key say so too),
// but get remembered the stopped origin by the URL's Host as written: the
// same origin spelled in another case was sent to again.
func TestGetStopsOriginWhateverItsSpelling(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
	}))
	defer srv.Close()
	lower := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	for _, other := range []string{
		strings.Replace(srv.URL, "127.0.0.1", "LOCALHOST", 1),
		strings.Replace(srv.URL, "127.0.0.1", "LocalHost", 1),
	} {
		g := &getter{client: srv.Client(), out: io.Discard, stopped: map[string]bool{}}
		req := httptest.NewRequest(http.MethodGet, lower+"/1", nil)
		g.event(polite.Event{Kind: polite.EventStop, Request: req})
		rec := g.fetch(t.Context(), other+"/2")
		if rec.Error == "" || rec.Attempts != 0 || hits.Load() != 0 {
			t.Errorf("after a stop of %s, %s/2: error %q, attempts %d, server hits %d; want an error, 0, 0 (the same origin)",
				lower, other, rec.Error, rec.Attempts, hits.Load())
		}
	}
}

// SECURITY.md: the polite command shows no user information, and a URL in
// which an '@' could end user information as well as belong to what
// follows it is shown as its scheme alone. In
// "http://alice:1234#hunter2@api.example/", "alice:1234#hunter2" may be
// user information (password "1234#hunter2"), which url.Parse reads as
// the origin "http://alice:1234": once that origin reported abnormal
// usage, get's error for the URL named it whole.
func TestGetStopErrorHidesAmbiguousUserinfo(t *testing.T) {
	const raw = "http://alice:1234#hunter2@api.example/"
	g := &getter{client: http.DefaultClient, out: io.Discard, stopped: map[string]bool{}}
	g.event(polite.Event{Kind: polite.EventStop, Request: httptest.NewRequest(http.MethodGet, "http://alice:1234/x", nil)})
	rec := g.fetch(t.Context(), raw)
	if rec.URL != "http://…" || rec.Error == "" {
		t.Fatalf("url %q, error %q; want the URL elided as http://… and not sent", rec.URL, rec.Error)
	}
	if strings.Contains(rec.Error, "1234") || strings.Contains(rec.Error, "alice") {
		t.Errorf("error %q shows the user information of %s (url shown as %q)", rec.Error, raw, rec.URL)
	}
}
