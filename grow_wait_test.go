package polite_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A request the server counts 1.3 times its estimate is refused with room
// stated for its cost (12,000 tokens left of 60,000 a minute, 1,000 a
// second, for a cost of 10,000 counted 13,000). The refusal's plan waits
// for room for twice the cost as the key held it at the refusal (8 s of
// refill), and Decide judges the retry by that wait: it fits MaxWait
// (10 s), or the context's deadline (12 s), so the Transport retries. But
// the retry's admission asks room for twice its cost as the key holds it
// once learnRefused has raised the scale (Ask.Grow 1, scale 0.402 held as
// 0.502: 2 × 15,020 tokens, 18 s of refill), past both. The request
// waited 8 s and then failed with a *WaitError and no response, where
// before Ask.Grow the retry went at 8 s (room for 12,510 then) and was
// accepted: the quota held 20,000 tokens for the 13,000 counted. A retry
// whose grown room it may not wait for asks for its cost alone now.
func TestGrownRetryFitsThePlanItWasJudgedBy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxWait  time.Duration
		deadline time.Duration
	}{
		{"MaxWait 10s", 10 * time.Second, 0},
		{"deadline 12s", 0, 12 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newTokenBucket(60000, 1000, 12000)
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					counted, _ := strconv.ParseFloat(r.Header.Get("X-Counted"), 64)
					b.answer(w, counted, false)
				})
				c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxWait: tc.maxWait}}
				ctx := polite.WithCost(t.Context(), polite.Cost{Tokens: 10000})
				if tc.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.deadline)
					defer cancel()
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/chat/completions", nil)
				req.Header.Set("X-Counted", "13000")
				start := time.Now()
				code, err := statusOf(c, req)
				if err != nil || code != http.StatusOK {
					t.Errorf("after %v: status %d, error %v; want 200 (the retry its plan judged to fit, sent at 8 s, is accepted)", time.Since(start), code, err)
				}
			})
		})
	}
}
