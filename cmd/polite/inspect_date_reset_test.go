package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite"
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
	rep := examine(resp.StatusCode, resp.Header, nil, nil, time.Time{}, time.Now())
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

// A 429 whose spent quota "resets" now or in the past gives no wait: the
// Transport backs off (its refusal floor decides, internal/control/resets.go:
// "A reset already past on a refusal says nothing of when the quota comes
// back"). inspect said the spent quota's reset gives a wait that polite
// uses; it says polite backs off.
func TestInspectPastResetClaimsNoWait(t *testing.T) {
	cases := map[string]func(now time.Time) http.Header{
		"ietf t=0": func(time.Time) http.Header {
			h := http.Header{}
			h.Set("RateLimit-Policy", `"default";q=10;w=60`)
			h.Set("RateLimit", `"default";r=0;t=0`)
			return h
		},
		"x-ratelimit reset in the past": func(now time.Time) http.Header {
			h := http.Header{}
			h.Set("X-RateLimit-Limit", "60")
			h.Set("X-RateLimit-Remaining", "0")
			h.Set("X-RateLimit-Reset", fmt.Sprint(now.Add(-42*time.Second).Unix()))
			return h
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			now := time.Now()
			h := mk(now)
			h.Set("Date", now.UTC().Format(http.TimeFormat))
			srv, st := refusing(t, h)
			if st.PauseReason == polite.ReasonQuota {
				t.Skipf("the library paused for the quota's reset (%v): no mismatch", st.PauseUntil)
			}

			rep := inspectJSON(t, srv.URL)
			backsOff := false
			for _, f := range rep.Findings {
				if strings.Contains(f, "a spent quota's reset gives a wait, which polite uses") {
					t.Errorf("inspect finding %q, but polite paused for %q until %v, not for the quota's reset (quotas %s)",
						f, st.PauseReason, st.PauseUntil.Sub(st.At).Round(time.Millisecond), fmtQuotas(rep.Quotas))
				}
				backsOff = backsOff || strings.Contains(f, "polite backs off")
			}
			if !backsOff {
				t.Errorf("findings %q: none says polite backs off", rep.Findings)
			}
		})
	}
}

// refusing starts a server that answers every request with a 429 of
// header h, closed when t ends, and returns it with the state of its key
// in a polite Transport of one attempt once it sent it a request: what
// the library does with the answer inspect reads.
func refusing(t *testing.T, h http.Header) (*httptest.Server, polite.State) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range h {
			w.Header()[k] = v
		}
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	tr := &polite.Transport{MaxAttempts: 1}
	req, _ := http.NewRequest("GET", srv.URL, nil)
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	st, _ := tr.Inspect(srv.URL, time.Now())
	return srv, st
}
