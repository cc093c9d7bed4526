package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// polite's Transport reads a 403 stating a spent quota and a reset just
// past (here the reset equal to its Date, as a server that rounds its
// resets down states it: TestForbiddenResetRoundedDown) as a refusal, and
// Transport.RetryAt agrees: inspect reads it so too, where it asked for a
// reset to come and said nothing of a refusal.
func TestInspectForbiddenResetAtDate(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	h := http.Header{
		"Date":                  {now.Format(http.TimeFormat)},
		"X-Ratelimit-Limit":     {"20"},
		"X-Ratelimit-Remaining": {"0"},
		"X-Ratelimit-Reset":     {strconv.FormatInt(now.Unix(), 10)},
	}
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	resp := &http.Response{StatusCode: http.StatusForbidden, Header: h, Request: req, Body: http.NoBody}
	_, transportRefusal := (&polite.Transport{}).RetryAt(resp)
	var finding string
	for _, f := range examine(http.StatusForbidden, h, nil, nil, time.Time{}, now).Findings {
		if strings.Contains(f, "without a valid Retry-After") {
			finding = f
		}
	}
	if transportRefusal && finding == "" {
		t.Errorf("403, remaining 0, reset at its Date: polite's Transport reads a refusal (RetryAt ok), inspect notes none; want the refusal noted (\"a spent quota's reset is now or past, which gives no wait: polite backs off\")")
	}
}
