package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// GitHub refuses past its secondary limit with a 403 and "Retry-After:
// 60", which polite reads as a refusal with a wait (README: "A 403 with
// Retry-After ... is a refusal too"). inspect showed retry-after: 1m0s and
// then failed the server with the rule "no rate-limit fields: clients
// cannot tell how fast they may go", which contradicted its own report.
func TestInspectForbiddenWithRetryAfterIsARefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	rep := inspectJSON(t, srv.URL+"/repos/x/y/issues")
	if rep.RetryAfterS == nil || *rep.RetryAfterS != 60 {
		t.Fatalf("retry_after_s = %v, want 60", rep.RetryAfterS)
	}
	if want := fmt.Sprintf(rulePassRetryAfter, http.StatusForbidden); rep.Verdict != "pass" || rep.Rule != want {
		t.Errorf("403 with Retry-After: 60: verdict %q (%s); want pass (%s)", rep.Verdict, rep.Rule, want)
	}
}
