package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// A server whose clock is truly 15 minutes behind refuses with a 403
// stating a spent quota and its reset rounded down (equal to its Date),
// its Date folded on one line by a proxy ("D, D"), as parse reads it and
// as TestRetryAtForbiddenPastResetWithDate folds it. polite's Transport
// (and RetryAt) measure the reset from D and read a refusal; so does
// inspect, which parsed the folded Date with http.ParseTime, failed,
// measured from its own now, 15 minutes later, and noted no refusal.
func TestInspectForbiddenFoldedDate(t *testing.T) {
	now := time.Now().UTC()
	d := now.Add(-15 * time.Minute).Truncate(time.Second)
	ds := d.Format(http.TimeFormat)
	h := http.Header{
		"Date":                  {ds + ", " + ds},
		"X-Ratelimit-Limit":     {"20"},
		"X-Ratelimit-Remaining": {"0"},
		"X-Ratelimit-Reset":     {strconv.FormatInt(d.Unix(), 10)},
	}
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	resp := &http.Response{StatusCode: http.StatusForbidden, Header: h, Request: req, Body: http.NoBody}
	_, transportRefusal := (&polite.Transport{}).RetryAt(resp)
	if !transportRefusal {
		t.Fatalf("RetryAt: not a refusal; the test proves nothing")
	}
	var finding string
	for _, f := range examine(http.StatusForbidden, h, nil, nil, time.Time{}, now).Findings {
		if strings.Contains(f, "without a valid Retry-After") {
			finding = f
		}
	}
	if finding == "" {
		t.Errorf("403, remaining 0, reset at its Date (folded \"D, D\", 15 min behind): polite's Transport reads a refusal (RetryAt ok), inspect notes none")
	}
	// The same 403 with its Date on one line: inspect agrees.
	h.Set("Date", ds)
	finding = ""
	for _, f := range examine(http.StatusForbidden, h, nil, nil, time.Time{}, now).Findings {
		if strings.Contains(f, "without a valid Retry-After") {
			finding = f
		}
	}
	if finding == "" {
		t.Errorf("single Date: inspect notes no refusal either")
	}
}
