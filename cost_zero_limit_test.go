package polite_test

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A quota of tokens stated as 0 paces nothing, as a quota of requests
// stated as 0 does (PolicyState.Quota: "-1 when unknown, or stated as 0,
// which paces nothing"): read as a whole quota of 0, every request that
// cost more than the most an answer stating it had served failed at once
// with a CostError, unsent, though the server (an OpenAI-compatible one
// stating 0 for a limit it does not enforce) served every request.
func TestCostZeroLimitPacesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sent++
			stateZeroTokenLimit(w.Header())
			w.WriteHeader(http.StatusOK)
		})
		c := declaredCostClient(h)
		for i, cost := range []int64{100, 200, 300} {
			code, err := sendDeclared(c, cost)
			var ce *polite.CostError
			if errors.As(err, &ce) {
				t.Errorf("request %d (cost %d): %v, for a quota stated as 0 that paces nothing", i+1, cost, err)
			} else if code != http.StatusOK {
				t.Errorf("request %d: %d %v", i+1, code, err)
			}
		}
		if sent != 3 {
			t.Errorf("server saw %d requests, want 3", sent)
		}
		st, _ := c.Transport.(*polite.Transport).Inspect("http://llm.example", time.Now())
		for _, p := range st.Policies {
			if p.Unit == "tokens" && p.Quota == 0 {
				t.Errorf("Inspect: tokens Quota = 0; PolicyState.Quota documents -1 for a quota stated as 0")
			}
		}
	})
}

// Nor does a refusal that states it fail the retry: it waits the refusal's
// wait, and the server serves it.
func TestCostZeroLimitRefusalRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sent++
			stateZeroTokenLimit(w.Header())
			if sent == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.WriteHeader(http.StatusOK)
		})
		c := declaredCostClient(h)
		code, err := sendDeclared(c, 200)
		if err != nil || code != http.StatusOK || sent != 2 {
			t.Errorf("got %d, %v after %d requests; want 200 after a retry (2 requests), for a quota stated as 0 that paces nothing", code, err, sent)
		}
	})
}

// stateZeroTokenLimit sets, on h, a tokens quota stated as 0, none left,
// whole again now.
func stateZeroTokenLimit(h http.Header) {
	h.Set("x-ratelimit-limit-tokens", "0")
	h.Set("x-ratelimit-remaining-tokens", "0")
	h.Set("x-ratelimit-reset-tokens", "0s")
}
