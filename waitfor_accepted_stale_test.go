package polite_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A cost above the stated limit that the server had accepted before
// waits in the Transport for the whole quota, however old the limit; once
// the limit was a minute old, WaitFor skipped the quota and reported no
// wait, while the request waited 9 minutes.
func TestWaitForAcceptedCostOfStaleLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hd := w.Header()
			hd.Set("x-ratelimit-limit-tokens", "10000")
			hd.Set("x-ratelimit-remaining-tokens", "0")
			hd.Set("x-ratelimit-reset-tokens", "10m") // about 16.7 tokens a second
		})
		c, tr := politeOver(h)
		send := func() {
			ctx := polite.WithCost(context.Background(), polite.Cost{Tokens: 12500})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/chat/completions", nil)
			if code, err := statusOf(c, req); code != http.StatusOK {
				t.Errorf("status %d, %v", code, err)
			}
		}
		send() // accepted: a cost of 12500 fits, though the limit states 10000
		time.Sleep(61 * time.Second)
		st, _ := tr.Inspect("http://llm.example", time.Now())
		for _, p := range st.Policies {
			t.Logf("%s: quota %d remaining %d accepted %d refill %.1f/s stated %v ago", p.Unit, p.Quota, p.Remaining, p.Accepted, p.Refill, st.At.Sub(p.Stated))
		}
		want, err := st.WaitFor(polite.Cost{Tokens: 12500})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		send()
		took := time.Since(start)
		t.Logf("WaitFor %v, waited %v", want, took)
		if d := took - want; d > time.Second || d < -time.Second {
			t.Errorf("WaitFor(12500 tokens) = %v, but the request waited %v", want, took)
		}
	})
}
