package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A 429 carrying only OpenAI's retry-after-ms, and no Retry-After field,
// passed with the rule "a 429 with a valid Retry-After: clients know how
// long to wait", and no finding said that the standard field was missing:
// a client that reads RFC 9110's Retry-After alone sees nothing. And a
// Retry-After that was not valid beside a valid retry-after-ms was not
// called invalid.
func TestInspectRetryAfterMsIsNotRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		name string
		h    http.Header
	}{
		{"retry-after-ms alone", http.Header{"Retry-After-Ms": {"1500"}}},
		{"retry-after-ms beside an invalid Retry-After", http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"soon"}}},
	} {
		rep := examine(http.StatusTooManyRequests, tt.h, nil, nil, time.Time{}, time.Now())
		if want := fmt.Sprintf(rulePartialRetryMs, http.StatusTooManyRequests); rep.Verdict != "partial" || rep.Rule != want {
			t.Errorf("429, %s: verdict %q (%s); want partial (%s)", tt.name, rep.Verdict, rep.Rule, want)
		}
		if !strings.Contains(strings.Join(rep.Findings, "\n"), "only the non-standard retry-after-ms") {
			t.Errorf("429, %s: findings %q; want one saying only retry-after-ms was sent", tt.name, rep.Findings)
		}
		if rep.RetryAfterS == nil || *rep.RetryAfterS != 1.5 {
			t.Errorf("429, %s: retry_after_s %v, want 1.5 (polite reads it)", tt.name, rep.RetryAfterS)
		}
		if _, bad := tt.h["Retry-After"]; bad && !strings.Contains(strings.Join(rep.Findings, "\n"), `Retry-After "soon" is not valid`) {
			t.Errorf("429, %s: findings %q; want the Retry-After called invalid", tt.name, rep.Findings)
		}
	}
	// Both: Retry-After is what standard clients read, and it is there.
	h := http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}
	if rep := examine(http.StatusTooManyRequests, h, nil, nil, time.Time{}, time.Now()); rep.Verdict != "pass" {
		t.Errorf("429 with retry-after-ms and Retry-After: verdict %q (%s), findings %q; want pass", rep.Verdict, rep.Rule, rep.Findings)
	}
}
