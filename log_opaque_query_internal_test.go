package polite

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A log record shows a request's path, never its query (event.go: "never
// its query, which may hold a secret"). net/http sends an Opaque as it is,
// and a '?' in it starts the query the server reads ("/p?token=..." is
// path "/p", query "token=..."): logPath showed it, since sentPath
// returns the Opaque's text up to its end.
func TestLogPathOfOpaqueHasNoQuery(t *testing.T) {
	for _, opaque := range []string{"/p?token=s3cr3t", "//a.test/p?token=s3cr3t", "http:/p?token=s3cr3t"} {
		u := &url.URL{Scheme: "http", Host: "a.test", Opaque: opaque}
		if got := logPath(u); got != "/p" {
			t.Errorf("logPath(Opaque %q) = %q, want %q: the query is logged", opaque, got, "/p")
		}
	}
}

// Base's error, in a log record or an event's Err, has the request's query
// hidden (logError hides RawQuery): a query carried in an Opaque, which
// net/http sends and the server reads as the query, was shown.
func TestLogErrorHidesOpaqueQuery(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
	req.URL = &url.URL{Scheme: "http", Host: "a.test", Opaque: "/p?token=s3cr3t"}
	msg := logError(errors.New("Get \""+req.URL.String()+"\": EOF"), req, false, "")
	if strings.Contains(msg, "s3cr3t") {
		t.Errorf("logError = %q: shows the query sent in the Opaque", msg)
	}
}

// An Opaque that is an absolute URL with no path and a query that holds a
// '/' ("//a.test?next=/s3cr3t"): net/http sends it as "http://a.test?next=/s3cr3t",
// path "" and query "next=/s3cr3t". logPath showed "/s3cr3t", the
// Opaque's text from its first '/', which was in the query.
func TestLogPathOpaqueAuthorityQueryWithSlash(t *testing.T) {
	for _, opaque := range []string{"//a.test?next=/s3cr3t", "http://a.test?next=/s3cr3t"} {
		u := &url.URL{Scheme: "http", Host: "a.test", Opaque: opaque}
		if got := logPath(u); strings.Contains(got, "s3cr3t") {
			t.Errorf("logPath(Opaque %q) = %q: shows the query", opaque, got)
		}
	}
}

// A query in RawQuery is hidden decoded too ("as a Base that logs its
// decoded values writes it"); a query in an Opaque was hidden only as
// written, its decoded spelling shown.
func TestLogErrorHidesOpaqueQueryDecoded(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
	// As RawQuery: the decoded query is hidden.
	req.URL = &url.URL{Scheme: "http", Host: "a.test", Path: "/p", RawQuery: "token=s3cr3t%2Bkey"}
	if msg := logError(errors.New("bad query token=s3cr3t+key"), req, false, ""); strings.Contains(msg, "s3cr3t") {
		t.Fatalf("RawQuery baseline: logError = %q", msg)
	}
	req.URL = &url.URL{Scheme: "http", Host: "a.test", Opaque: "/p?token=s3cr3t%2Bkey"}
	if msg := logError(errors.New("bad query token=s3cr3t+key"), req, false, ""); strings.Contains(msg, "s3cr3t") {
		t.Errorf("logError = %q: shows the Opaque's query decoded", msg)
	}
}
