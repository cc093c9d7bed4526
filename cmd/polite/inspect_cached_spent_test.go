package main

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A 429 with no Retry-After whose legacy quota is spent, its reset 30 s
// away: fresh, polite waits for that reset, and inspect says so; from a
// cache (Age), polite reads no quota from it (draft-11 §7.3) and backs
// off, and inspect says that instead of a wait polite does not take.
func TestInspectCachedSpentQuotaBacksOff(t *testing.T) {
	for _, age := range []string{"", "5"} {
		h := http.Header{
			"X-Ratelimit-Limit":     {"10"},
			"X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Reset":     {"30"},
		}
		if age != "" {
			h.Set("Age", age)
		}
		var finding string
		for _, f := range examine(http.StatusTooManyRequests, h, nil, nil, time.Time{}, time.Now()).Findings {
			if strings.Contains(f, "without a valid Retry-After") {
				finding = f
			}
		}
		waits := inspectRetryWait(t, h)
		switch {
		case waits >= 25*time.Second && !strings.Contains(finding, "gives a wait, which polite uses"):
			t.Errorf("Age %q: polite's retry waited %v, for the reset; inspect says %q", age, waits, finding)
		case waits < 25*time.Second && !strings.Contains(finding, "polite backs off"):
			t.Errorf("Age %q: polite's retry waited %v, a backoff; inspect says %q", age, waits, finding)
		}
	}
}

// inspectRetryWait returns how long polite's Transport waits to retry a
// request first answered 429 with header h.
func inspectRetryWait(t *testing.T, h http.Header) time.Duration {
	var wait time.Duration
	synctest.Test(t, func(t *testing.T) {
		n := 0
		tr := &polite.Transport{
			MaxAttempts: 2,
			Base: baseFunc(func(r *http.Request) (*http.Response, error) {
				if n++; n == 1 {
					return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h.Clone(), Body: http.NoBody, Request: r}, nil
				}
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}),
			OnEvent: func(e polite.Event) {
				if e.Kind == polite.EventRetry {
					wait = e.Wait
				}
			},
		}
		req, _ := http.NewRequest(http.MethodGet, "http://api.example/x", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
	return wait
}

type baseFunc func(*http.Request) (*http.Response, error)

func (f baseFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
