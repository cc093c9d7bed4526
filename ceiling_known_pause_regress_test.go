package polite_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A request a local ceiling holds (MaxRate's 10 ms spacing) while the key's
// quota learned from refusals paces it past its deadline fails at once,
// and the reason first given was ReasonPace, for any next start the key's
// paces set, the learned pace's included. The budget holds such a request
// for ReasonAdaptive, as it says when no ceiling holds it. The key states
// no quota and the Budget has no MaxRate: nothing paces it but the learned
// quota.
func TestHeldByCeilingLearnedPaceNamedAdaptive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Dialect:  ratelimittest.Bare429, // says nothing: the key learns its quota
			Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.FixedWindow, Quota: 5, Window: 10 * time.Second}},
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 1, MaxRate: 100}
		reasons := map[polite.Reason]int{}
		for range 200 {
			ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			resp, err := tr.RoundTrip(req)
			cancel()
			if err == nil {
				resp.Body.Close()
				continue
			}
			var we *polite.WaitError
			if !errors.As(err, &we) {
				t.Fatal(err)
			}
			reasons[we.Reason]++
			if we.Reason == polite.ReasonPace {
				st, _ := tr.Inspect("http://api.test", time.Now())
				if len(st.Policies) == 0 && st.Learned != nil && time.Until(we.Until) > 100*time.Millisecond {
					t.Fatalf("WaitError %v: Reason %q, Until in %v; want %q: only the learned quota %d per %v paces the key (no stated quota, no Budget.MaxRate; MaxRate's spacing is 10ms)",
						we, we.Reason, time.Until(we.Until), polite.ReasonAdaptive, st.Learned.Quota, st.Learned.Window)
				}
			}
			time.Sleep(time.Second)
		}
		if reasons[polite.ReasonAdaptive] == 0 {
			t.Fatalf("WaitError reasons %v: the learned quota never held a request past its deadline; the test proves nothing", reasons)
		}
	})
}

// A request a local ceiling holds (MaxRate, as a Crawl-delay holds every
// request of a paced crawl) reads the budget's hold each time round the
// wait loop, which first built a whole State (the View's policies, the
// key's display string, for a custom key its HMAC fingerprint), all thrown
// away but three instants: 8, 11 and 16 allocations a request held, where
// a ceiling's hold alone costs 5, 6 and 6.
func TestHeldRequestAllocations(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  func(*http.Request) string
		hdr  http.Header
		want float64 // a ceiling's hold alone
	}{
		{"origin", nil, http.Header{}, 5},
		{"origin stating a quota", nil, http.Header{"Ratelimit-Policy": {`"p";q=1000000;w=1`}, "Ratelimit": {`"p";r=999999;t=1`}}, 6},
		{"custom key", func(r *http.Request) string { return "tenant-42:" + r.URL.Host }, http.Header{}, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				resp := &http.Response{StatusCode: 200, Header: tc.hdr, Body: http.NoBody}
				tr := &polite.Transport{MaxRate: 1, Key: tc.key, Base: roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })}
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
				tr.RoundTrip(req)
				start := time.Now()
				allocs := testing.AllocsPerRun(100, func() {
					if _, err := tr.RoundTrip(req); err != nil {
						t.Fatal(err)
					}
				})
				if per := time.Since(start) / 101; per != time.Second {
					t.Fatalf("%v a request, want each held 1s by MaxRate", per)
				}
				if allocs > tc.want {
					t.Errorf("%v allocations per request held by MaxRate, want at most %v, as a ceiling's hold alone costs", allocs, tc.want)
				}
			})
		})
	}
}
