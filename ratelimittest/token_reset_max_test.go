package ratelimittest_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// TestOpenAIResetOfLongestWindow: OpenAIAPI states "the reset as the time
// until the quota is whole again, in the format of time.Duration.String,
// rounded up to the millisecond" (tokens.go). With a Window so long that
// the time until whole is within a millisecond of the largest Duration,
// rounding up wraps around: the reset, and a refusal's retry-after-ms,
// come out negative, as if the quota were whole long ago.
// OpenAIAPI states the reset as the time until the quota is whole again,
// rounded up to the millisecond. With a Window within a millisecond of the
// largest Duration, rounding up wrapped around: the reset, and a refusal's
// retry-after-ms, came out negative, as if the quota were whole long ago.
func TestOpenAIResetOfLongestWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{
			Window:     math.MaxInt64,
			Requests:   1,
			RetryAfter: true,
		})
		c := client(h)
		body := ratelimittest.TokenTask{Input: 10, MaxOutput: 10}.Body(ratelimittest.OpenAIAPI)
		for i := range 2 {
			resp, _ := post(t, c, chatPath, body)
			reset := resp.Header.Get("X-Ratelimit-Reset-Requests")
			d, err := time.ParseDuration(reset)
			if err != nil || d <= 0 {
				t.Errorf("response %d (%d): x-ratelimit-reset-requests %q, want a positive duration (the quota is spent)", i+1, resp.StatusCode, reset)
			}
			if ms := resp.Header.Get("Retry-After-Ms"); ms != "" {
				if n, err := strconv.ParseInt(ms, 10, 64); err != nil || n <= 0 || strings.HasPrefix(ms, "-") {
					t.Errorf("refusal: retry-after-ms %q, want a positive number", ms)
				}
			}
		}
	})
}
