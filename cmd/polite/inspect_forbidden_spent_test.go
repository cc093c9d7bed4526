package main

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// GitHub answers past its primary limit with a 403, X-RateLimit-Remaining
// 0 and the reset, and no Retry-After. polite's Transport reads such a 403
// as a refusal (transport.go, forbiddenRefusal: "a quota it states is
// spent with its reset still to come"), pausing the origin until the
// reset. inspect, which promises "findings in plain words about what
// clients will make of it", says for the same fields on a 429 that "a
// spent quota's reset gives a wait, which polite uses", but for the 403
// said nothing of a refusal at all: it treated a 403 as a refusal only
// with a valid Retry-After.
func TestInspectForbiddenSpentQuotaIsARefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "5000")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Used", "5000")
		w.Header().Set("X-RateLimit-Resource", "core")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	rep := inspectJSON(t, srv.URL+"/repos/x/y")
	if !containsAll(rep.Findings, "a spent quota's reset gives a wait, which polite uses") {
		t.Errorf("403 with X-RateLimit-Remaining: 0 and a reset an hour away (a refusal to polite): findings %q; want the refusal noted, as for a 429 (\"a spent quota's reset gives a wait, which polite uses\")", rep.Findings)
	}
}
