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
