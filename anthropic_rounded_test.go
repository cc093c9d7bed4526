package polite_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// Anthropic rounds the tokens left to the nearest thousand
// (https://docs.anthropic.com/en/api/rate-limits#response-headers). The
// count was read as exact: 4,600 left, stated as 5000, let a request of
// 4,900 go at once, and the server refused it. The server here is a
// bucket of 30,000 input tokens a minute that rounds as Anthropic does.
func TestAnthropicRoundedRemainingRefusesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit, perSec = 30000, 500 // 30,000 input tokens a minute
		var mu sync.Mutex
		level, at := float64(limit), time.Now()
		refused := 0
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			now := time.Now()
			level = min(limit, level+perSec*now.Sub(at).Seconds())
			at = now
			cost, _ := strconv.ParseFloat(req.Header.Get("X-Input"), 64)
			status := 200
			if cost > level {
				status = 429
				refused++
			} else {
				level -= cost
			}
			h := http.Header{}
			h.Set("Date", now.UTC().Format(http.TimeFormat))
			h.Set("anthropic-ratelimit-input-tokens-limit", strconv.Itoa(limit))
			rounded := int64(level+500) / 1000 * 1000 // to the nearest thousand
			h.Set("anthropic-ratelimit-input-tokens-remaining", strconv.FormatInt(rounded, 10))
			full := now.Add(time.Duration((limit - level) / perSec * float64(time.Second))).Truncate(time.Second).Add(time.Second)
			h.Set("anthropic-ratelimit-input-tokens-reset", full.UTC().Format(time.RFC3339))
			if status == 429 {
				h.Set("retry-after", "1")
			}
			return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
		})
		c := &http.Client{Transport: &polite.Transport{Base: base}}
		send := func(in int64) {
			req, _ := http.NewRequestWithContext(polite.WithCost(t.Context(), polite.Cost{InputTokens: in}), "POST", "http://claude.test/v1/messages", nil)
			req.Header.Set("X-Input", strconv.FormatInt(in, 10))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		send(25400) // leaves 4,600, stated as 5000
		send(4900)
		if refused != 0 {
			t.Errorf("%d refused; want 0: the stated remaining (5000) is rounded to the nearest thousand, and 4,900 did not fit the 4,600 left", refused)
		}
	})
}
