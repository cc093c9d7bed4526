package ratelimittest_test

import (
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite/ratelimittest"
)

// RoundRemaining states the tokens left to the nearest multiple, halves
// up, as Anthropic states them to the nearest thousand; the requests left
// stay exact.
func TestTokenHandlerRoundRemaining(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{
			API: ratelimittest.AnthropicAPI, Requests: 50, InputTokens: 1000, OutputTokens: 400, RoundRemaining: 200,
		})
		body := ratelimittest.TokenTask{Input: 100, MaxOutput: 300}.Body(ratelimittest.AnthropicAPI)
		resp, _ := post(t, client(h), messagesPath, body)
		for field, want := range map[string]string{
			"anthropic-ratelimit-requests-remaining":      "49",   // exact
			"anthropic-ratelimit-input-tokens-remaining":  "1000", // 900, a half, up
			"anthropic-ratelimit-output-tokens-remaining": "200",  // 100, a half, up
			"anthropic-ratelimit-tokens-remaining":        "1000", // 1000
		} {
			if got := resp.Header.Get(field); got != want {
				t.Errorf("%s: %q, want %q", field, got, want)
			}
		}
	})
}

// A count rounded up never states more left than the limit: of 1,080
// input tokens, 1,079 left, rounded to the nearest 100, were stated as
// 1,100 left.
func TestTokenHandlerRoundRemainingAtMostLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{
			API: ratelimittest.AnthropicAPI, Requests: 50, InputTokens: 1080, OutputTokens: 480, RoundRemaining: 100,
		})
		body := ratelimittest.TokenTask{Input: 1, MaxOutput: 1}.Body(ratelimittest.AnthropicAPI)
		resp, _ := post(t, client(h), messagesPath, body)
		for _, unit := range []string{"input-tokens", "output-tokens", "tokens"} {
			limit := resp.Header.Get("anthropic-ratelimit-" + unit + "-limit")
			got := resp.Header.Get("anthropic-ratelimit-" + unit + "-remaining")
			if len(got) > len(limit) || len(got) == len(limit) && got > limit {
				t.Errorf("%s: %s remaining of a limit of %s", unit, got, limit)
			}
		}
	})
}
