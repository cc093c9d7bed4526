package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
	"github.com/politehttp/polite/ratelimittest"
)

// An X-RateLimit-Reset given as an HTTP-date (sethvargo/go-limiter,
// ratelimittest.XRateLimitDate), which parse reads, was reported among the
// legacy fields "that are not valid numbers, which clients ignore": its
// value was cut at the comma after the weekday before it was tried as a
// date. Jira's minute-precision reset was reported so too.
func TestInspectDateResetIsValid(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 5, Window: 10 * time.Second}},
		Dialect:  ratelimittest.XRateLimitDate,
	})
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	rep := examine(resp.StatusCode, resp.Header, nil, nil, time.Now())
	if len(rep.Quotas) != 1 || rep.Quotas[0].ResetS == nil {
		t.Fatalf("quotas = %+v; want one with its reset read", rep.Quotas)
	}
	for _, f := range rep.Findings {
		if strings.Contains(f, "not valid numbers") {
			t.Errorf("X-RateLimit-Reset: %q (read as reset %vs) reported as invalid: %s",
				resp.Header.Get("X-RateLimit-Reset"), *rep.Quotas[0].ResetS, f)
		}
	}
	// The same with a bare header, as a server sends it.
	h := http.Header{}
	now := time.Now()
	h.Set("Date", now.UTC().Format(http.TimeFormat))
	h.Set("X-RateLimit-Limit", "100")
	h.Set("X-RateLimit-Remaining", "40")
	h.Set("X-RateLimit-Reset", now.Add(35*time.Second).UTC().Format(http.TimeFormat))
	if bad := badLegacyFields(h); len(bad) > 0 {
		t.Errorf("badLegacyFields = %q; want none for an HTTP-date reset", bad)
	}
	// Jira Cloud's minute-precision ISO reset (2024-03-26T16:01Z),
	// which parse reads too.
	h.Set("X-RateLimit-Reset", now.Add(2*time.Minute).UTC().Format("2006-01-02T15:04Z"))
	if q := parse.Header(h, now); len(q) != 1 || q[0].Reset < 0 {
		t.Fatalf("parse.Header = %+v; want the Jira reset read", q)
	}
	if bad := badLegacyFields(h); len(bad) > 0 {
		t.Errorf("badLegacyFields = %q; want none for a reset parse reads", bad)
	}
}
