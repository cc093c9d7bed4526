package ratelimittest_test

import (
	"math"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// A request admitted before Handler.Reset and answered after it stated
// the counters Reset had discarded: r=0 and nearly an hour to wait, while
// the Handler admitted the next request at once.
func TestAnswerAfterResetStatesNewCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Latency:  time.Second,
			Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Hour}},
		})
		c := client(h)
		done := make(chan *http.Response)
		go func() {
			resp, _ := send(t, c, "")
			done <- resp
		}()
		time.Sleep(500 * time.Millisecond)
		h.Reset()
		first := <-done // answered at 1 s, after the Reset
		if got, want := first.Header.Get("RateLimit"), `"default";r=1;t=3600`; got != want {
			t.Errorf("the answer written after Reset states %s, want %s", got, want)
		}
		if second, _ := send(t, c, ""); second.StatusCode != http.StatusOK {
			t.Errorf("request after Reset: %d, want 200", second.StatusCode)
		}
	})
}

// A RobotsConfig.RetryAfter near the largest Duration overflowed its
// rounding up and was sent negative.
func TestRobotsHugeRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Status: 503, RetryAfter: math.MaxInt64})
		req, _ := http.NewRequest(http.MethodGet, "http://site.example/robots.txt", nil)
		resp, err := client(h).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ra := resp.Header.Get("Retry-After")
		if n, err := strconv.ParseInt(ra, 10, 64); err != nil || n < 0 {
			t.Errorf("Retry-After %q, want non-negative delay-seconds", ra)
		}
	})
}

// Anthropic's "tokens" remaining, the sum of the input and output ones,
// overflowed to a negative count where its limit saturated.
func TestAnthropicTokensRemainingSaturates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{
			API:          ratelimittest.AnthropicAPI,
			InputTokens:  math.MaxInt64,
			OutputTokens: 1000,
		})
		resp, _ := post(t, client(h), messagesPath, ratelimittest.TokenTask{Input: 10, MaxOutput: 5}.Body(ratelimittest.AnthropicAPI))
		rem := resp.Header.Get("anthropic-ratelimit-tokens-remaining")
		if n, err := strconv.ParseInt(rem, 10, 64); err != nil || n < 0 {
			t.Errorf("anthropic-ratelimit-tokens-remaining %q, want a non-negative count", rem)
		}
	})
}
