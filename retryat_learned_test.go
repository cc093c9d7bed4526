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

// RetryAt of a refusal is documented as the instant a *WaitError of the
// next request to the key would carry in Until, or later. A key paced by a
// quota learned from refusals (ReasonAdaptive) was paced, yet RetryAt left
// that pace out (State.acceptsAt read the stated paces and MaxRate only):
// a request sent at the instant RetryAt gave was held, up to a whole
// learned window, and failed with a WaitError whose Until was later.
func TestRetryAtCountsLearnedPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := learnedQuotaHandler()
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 1}
		c := &http.Client{Transport: tr}
		for i := range 80 {
			resp, err := c.Get("http://api.test/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusTooManyRequests {
				continue
			}
			at, ok := tr.RetryAt(resp)
			if !ok {
				t.Fatal("RetryAt of a 429: false")
			}
			time.Sleep(time.Until(at)) // retry exactly when RetryAt says
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			r2, err := c.Do(req)
			cancel()
			if err == nil {
				r2.Body.Close()
				continue
			}
			var we *polite.WaitError
			if errors.As(err, &we) && we.Until.After(at.Add(50*time.Millisecond)) {
				st, _ := tr.Inspect("http://api.test", time.Now())
				t.Fatalf("request %d refused; RetryAt said %v; a request sent then was held until %v (+%v, reason %q; learned quota %+v)",
					i, at.Format(time.StampMilli), we.Until.Format(time.StampMilli), we.Until.Sub(at), we.Reason, st.Learned)
			}
		}
	})
}

// A request a local ceiling holds (MaxRate's 10 ms spacing) while the key's
// quota learned from refusals paces it past its deadline fails at once,
// and the reason first given was ReasonPace, for any next start the key's
// paces set, the learned pace's included. The budget holds such a request
// for ReasonAdaptive, as it says when no ceiling holds it. The key states
// no quota and the Budget has no MaxRate: nothing paces it but the learned
// quota.
func TestHeldByCeilingLearnedPaceNamedAdaptive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := learnedQuotaHandler()
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

// learnedQuotaHandler is a server of 5 requests a 10 s window that says
// nothing of it: a key learns its quota from its refusals.
func learnedQuotaHandler() *ratelimittest.Handler {
	return ratelimittest.NewHandler(ratelimittest.Config{
		Dialect:  ratelimittest.Bare429,
		Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.FixedWindow, Quota: 5, Window: 10 * time.Second}},
	})
}
