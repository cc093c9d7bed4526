package ratelimittest_test

import (
	"encoding/json"
	"math"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// A streamed request is in flight for Latency plus Stream. With a Latency
// near the largest Duration, the sum wrapped around to a negative
// duration, and Ideal said 0s for requests that take centuries.
func TestIdealLatencyPlusStreamSaturates(t *testing.T) {
	for _, latency := range []time.Duration{math.MaxInt64, math.MaxInt64 - time.Second/2} {
		cfg := ratelimittest.Config{Latency: latency, Stream: time.Second}
		if got := ratelimittest.Ideal(cfg, 3, 1); got != math.MaxInt64 {
			t.Errorf("Ideal with Latency %d and Stream 1s = %v, want the largest Duration", latency, got)
		}
	}
}

// A streamed body costs a content-bytes policy StreamEvents times its
// event, framing included. With a huge StreamEvents the product wrapped
// around to a negative cost: the Handler admitted the request and stated
// more remaining than the quota, and Ideal said 3s for requests no quota
// can admit.
func TestStreamedContentBytesSaturate(t *testing.T) {
	cfg := ratelimittest.Config{
		Policies:     []ratelimittest.Policy{{Quota: 100, Window: time.Second, Unit: "content-bytes"}},
		Stream:       time.Second,
		StreamEvents: math.MaxInt / 5,
	}
	if got := ratelimittest.Ideal(cfg, 3, 1); got != math.MaxInt64 {
		t.Errorf("Ideal = %v, want the largest Duration", got)
	}
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(cfg)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.example/", nil)
		resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close() // ends a stream
		if got := resp.Header.Get("RateLimit"); resp.StatusCode != http.StatusTooManyRequests || got != `"default";r=100;t=1` {
			t.Errorf("GET: %d, RateLimit %q; want 429 with all 100 bytes remaining", resp.StatusCode, got)
		}
	})
}

// The usage of an OpenAI response states total_tokens, the prompt plus
// the output. A client's max_tokens of the largest int64, all produced,
// or a Prompt counting the largest int64, made the sum wrap around:
// total_tokens came out negative (-9223372036854775801 for a prompt of 8
// tokens), below both of its parts.
func TestTokenUsageTotalSaturates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		all := func(bound int64) int64 { return bound }
		for _, tt := range []struct {
			name, path, body string
			cfg              ratelimittest.TokenConfig
		}{
			{"chat, max_tokens all produced", chatPath,
				`{"model":"m","max_tokens":9223372036854775807,"messages":[{"role":"user","content":"hi"}]}`,
				ratelimittest.TokenConfig{Output: all}},
			{"responses, max_output_tokens all produced", "/v1/responses",
				`{"model":"m","max_output_tokens":9223372036854775807,"input":"hi"}`,
				ratelimittest.TokenConfig{Output: all}},
			{"chat, Prompt the largest int64", chatPath,
				`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
				ratelimittest.TokenConfig{Prompt: func(int64) int64 { return math.MaxInt64 }}},
		} {
			h := ratelimittest.NewTokenHandler(tt.cfg)
			resp, body := post(t, client(h), tt.path, tt.body)
			var v struct {
				Usage struct {
					TotalTokens int64 `json:"total_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(body), &v); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s: %d %v", tt.name, resp.StatusCode, err)
			}
			if got := v.Usage.TotalTokens; got != math.MaxInt64 {
				t.Errorf("%s: total_tokens %d, want %d", tt.name, got, int64(math.MaxInt64))
			}
		}
	})
}

// TokenTask.Body multiplied the prompt's tokens by the bytes of a token,
// which wrapped around for a huge Input: Input 1<<61+7 panicked
// (strings.Builder.Grow: negative count), and the largest int64 gave a
// body of an empty prompt, charged 7 tokens. A TokenHandler reads a
// body's first MiB only: the body of a huge Input is charged that MiB.
func TestTokenTaskBodyOfHugeInput(t *testing.T) {
	for _, in := range []int64{1<<61 + 7, math.MaxInt64} {
		for _, api := range []ratelimittest.API{ratelimittest.OpenAIAPI, ratelimittest.AnthropicAPI} {
			func() {
				defer func() {
					if err := recover(); err != nil {
						t.Errorf("Body of Input %d for %s panicked: %v", in, api, err)
					}
				}()
				path := chatPath
				if api == ratelimittest.AnthropicAPI {
					path = messagesPath
				}
				body := ratelimittest.TokenTask{Input: in, MaxOutput: 1}.Body(api)
				task, ok := ratelimittest.EstimateTask(path, body)
				if !ok || task.Input < 262000 || len(body) > 1<<20+100 {
					t.Errorf("Body of Input %d for %s: %d bytes, charged %d tokens (%v); want a MiB, charged 262000 or more",
						in, api, len(body), task.Input, ok)
				}
			}()
		}
	}
}

// A content-bytes policy with a quota near the largest int64, charged
// BodySize 1<<62 bytes a request (a custom Next, so nothing that large is
// written): the quota holds one such request a window. The fixed window's
// used+cost wrapped past math.MaxInt64 to a negative sum, so that the
// second request was admitted too, and every one after it, while the
// fields stated 0 bytes remaining; Ideal, which runs the same limiters,
// said two requests took no time.
func TestHugeQuotaCostFixedWindow(t *testing.T) {
	const quota = 1<<63 - 1
	for _, alg := range []ratelimittest.Algorithm{ratelimittest.FixedWindow, ratelimittest.FixedWindowFromFirst} {
		t.Run(string(alg), func(t *testing.T) {
			cfg := ratelimittest.Config{
				Policies: []ratelimittest.Policy{{Algorithm: alg, Quota: quota, Window: time.Minute, Unit: "content-bytes"}},
				BodySize: 1 << 62,
				Next:     http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
			}
			if got := ratelimittest.Ideal(cfg, 2, 1); got < time.Minute {
				t.Errorf("Ideal(2 requests) = %v; want a window at least: the quota holds one request", got)
			}
			synctest.Test(t, func(t *testing.T) {
				c := client(ratelimittest.NewHandler(cfg))
				var codes []int
				var fields []string
				for range 3 {
					resp, _ := send(t, c, "")
					codes = append(codes, resp.StatusCode)
					fields = append(fields, resp.Header.Get("RateLimit"))
				}
				if codes[1] != http.StatusTooManyRequests || codes[2] != http.StatusTooManyRequests {
					t.Errorf("statuses %v, RateLimit %q; want 200 then 429s: %d bytes hold one request of %d", codes, fields, int64(quota), int64(1<<62))
				}
			})
		})
	}
}
