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
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Dialect:  ratelimittest.Bare429, // says nothing: the key learns its quota
			Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.FixedWindow, Quota: 5, Window: 10 * time.Second}},
		})
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
