package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// A 200 without rate-limit fields failed with the rule "no rate-limit
// fields and no Retry-After on a refusal", though nothing was refused;
// the rule of a fail names what is missing for the status seen.
func TestFailRuleFitsTheStatus(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		status       int
		want, wantNo string
	}{
		{http.StatusOK, "no rate-limit fields", "on a refusal"},
		{http.StatusServiceUnavailable, "a 503 with neither rate-limit fields nor a valid Retry-After", ""},
	} {
		rep := examine(tt.status, http.Header{}, nil, nil, time.Time{}, now)
		if rep.Verdict != "fail" {
			t.Errorf("status %d: verdict %q, want fail", tt.status, rep.Verdict)
		}
		if !strings.Contains(rep.Rule, tt.want) || tt.wantNo != "" && strings.Contains(rep.Rule, tt.wantNo) {
			t.Errorf("status %d: rule %q, want it to say %q and not %q", tt.status, rep.Rule, tt.want, tt.wantNo)
		}
	}
}
