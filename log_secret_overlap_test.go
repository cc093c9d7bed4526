package polite_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite"
)

// shows reports, for a test, where the log or an event's Err shows s.
func shows(t *testing.T, logs string, errs []string, s, what string) {
	t.Helper()
	if !strings.Contains(logs, "EOF") || strings.Contains(logs, s) {
		t.Errorf("the log shows %s, %q:\n%s", what, s, logs)
	}
	if len(errs) == 0 {
		t.Error("no event carried the error")
	}
	for _, e := range errs {
		if strings.Contains(e, s) {
			t.Errorf("an event's Err shows %s, %q: %s", what, s, e)
		}
	}
}

// A custom key shaped like a URL (the origin and a tenant's first path
// segment, "https://api.example/a", a shape Budget.Inspect documents)
// overlaps the path without holding it: hidden first for being longer, it
// cut the path's match, and the rest of the path was shown though
// Transport.Key is set. Every secret is found in the message as it came
// now, and the spans they cover hidden together.
func TestLogHidesPathOverlappingCustomKey(t *testing.T) {
	const rest = "records/mrn-4411" // the path is shorter than the key
	logs, errs := loggedWithKey(t, "https://api.example/tenant-acme/"+rest, nil,
		func(r *http.Request) string {
			return r.URL.Scheme + "://" + r.URL.Host + "/" + strings.Split(r.URL.Path, "/")[1]
		},
		func(r *http.Request) string { return "Get " + strconv.Quote(r.URL.String()) })
	shows(t, logs, errs, rest, "the path's rest")
}

// A custom key holding a '/' and a byte to escape ("Acme Corp/eu", an
// account and its region) was hidden as url.PathEscape writes it, one
// segment ("Acme%20Corp%2Feu"), not as a path does ("Acme%20Corp/eu"): a
// Base that moved the key into the path of the URL it calls had it shown.
func TestLogHidesCustomKeyAsPathWritesIt(t *testing.T) {
	const account = "Acme Corp/eu-west-1"
	logs, errs := loggedWithKey(t, "https://api.example/v1/things", http.Header{"X-Account": {account}},
		func(r *http.Request) string { return r.Header.Get("X-Account") },
		func(r *http.Request) string {
			u := url.URL{Scheme: "https", Host: "upstream.example", Path: "/accounts/" + r.Header.Get("X-Account") + "/things"}
			return "Get " + strconv.Quote(u.String())
		})
	shows(t, logs, errs, (&url.URL{Path: account}).EscapedPath(), "the custom key as a path writes it")
}

// A cookie whose value is written between double quotes (RFC 6265
// §4.1.1) was hidden quoted only: a Base quoting r.Cookie("session").Value,
// which net/http reads without the quotes, had the session logged whole.
func TestLogHidesQuotedCookieBare(t *testing.T) {
	const session = "8f14e45fceea167a5a36dedd4bea2543"
	logs, errs := loggedWithKey(t, "https://api.example/v1/things", http.Header{"Cookie": {`session="` + session + `"; theme=dark`}}, nil,
		func(r *http.Request) string {
			c, err := r.Cookie("session")
			if err != nil {
				return err.Error()
			}
			return "session " + c.Value + " expired"
		})
	shows(t, logs, errs, session, "the session cookie's value")
}

// An event's Err is built with the error's text: a GetBody failing with a
// typed nil (a *os.PathError left nil), whose Error dereferences it, made
// RoundTrip panic as soon as an OnEvent listened. The text is read as fmt
// prints it ("<nil>").
func TestEventErrOfTypedNilNoPanic(t *testing.T) {
	var events int
	var got error
	var panicked any
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{RetryTransient: true, MaxAttempts: 2,
			OnEvent: func(e polite.Event) {
				if e.Err != nil {
					events++
				}
			},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
				return nil, io.ErrUnexpectedEOF // transient: retried
			})}
		req, _ := http.NewRequest(http.MethodPut, "https://api.example/v1/things/1", bytes.NewReader([]byte("body")))
		req.GetBody = func() (io.ReadCloser, error) {
			var pe *os.PathError // typed nil
			return nil, pe
		}
		func() {
			defer func() { panicked = recover() }()
			_, got = tr.RoundTrip(req)
		}()
	})
	if panicked != nil {
		t.Fatalf("RoundTrip panicked with only OnEvent set: %v", panicked)
	}
	if got == nil {
		t.Fatal("RoundTrip returned no error")
	}
	t.Logf("events with Err: %d; error: %v", events, fmt.Sprint(got))
}
