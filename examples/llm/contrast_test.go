package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// openAIRetrying is openAICall with the SDK's own retries: its default of
// two (retry-after-ms, else retry-after, else a backoff from 0.5 s
// doubling up to 8 s, with jitter).
func openAIRetrying(c *http.Client, baseURL string) call {
	client := openai.NewClient(
		option.WithBaseURL(baseURL+"/v1"),
		option.WithAPIKey("sk-test"),
		option.WithHTTPClient(c),
	)
	return func(ctx context.Context, tk task) error {
		_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:               openai.ChatModelGPT4oMini,
			Messages:            []openai.ChatCompletionMessageParamUnion{openai.UserMessage(tk.prompt)},
			MaxCompletionTokens: openai.Int(tk.maxTokens),
		})
		return err
	}
}

// cookbook is a static limiter as the OpenAI cookbook's parallel request
// processor (api_request_parallel_processor.py) builds one: capacities of
// requests and tokens per minute set by hand, refilled continuously and
// starting full; each request consumes its estimated prompt tokens plus
// its max_tokens; after any refusal every request waits until 15 s have
// passed since it; a task is attempted at most 5 times. It reads no
// rate-limit header. The prompt is estimated at 4 characters a token, the
// rule of thumb, where the cookbook uses tiktoken.
type cookbook struct {
	rpm, tpm float64

	mu                sync.Mutex
	requests, tokens  float64
	last, lastRefusal time.Time
	maxAttempts       int
}

func newCookbook(rpm, tpm float64) *cookbook {
	return &cookbook{rpm: rpm, tpm: tpm, requests: rpm, tokens: tpm, last: time.Now(), maxAttempts: 5}
}

// estimate is the cookbook's count of a chat completion: 4 tokens a
// message and 2 a reply, the message's fields, and the output bound.
func (c *cookbook) estimate(tk task) float64 {
	return float64(4+(len(tk.prompt)+len("user"))/4+2) + float64(tk.maxTokens)
}

// wait takes capacity for a request of need tokens, waiting as long as it
// must.
func (c *cookbook) wait(ctx context.Context, need float64) error {
	for {
		c.mu.Lock()
		now := time.Now()
		if since := now.Sub(c.lastRefusal); !c.lastRefusal.IsZero() && since < 15*time.Second {
			c.mu.Unlock()
			if err := sleep(ctx, 15*time.Second-since); err != nil {
				return err
			}
			continue
		}
		minutes := now.Sub(c.last).Minutes()
		c.requests = min(c.requests+c.rpm*minutes, c.rpm)
		c.tokens = min(c.tokens+c.tpm*minutes, c.tpm)
		c.last = now
		if c.requests >= 1 && c.tokens >= need {
			c.requests--
			c.tokens -= need
			c.mu.Unlock()
			return nil
		}
		d := time.Duration(max((need-c.tokens)/c.tpm, (1-c.requests)/c.rpm) * float64(time.Minute))
		c.mu.Unlock()
		if err := sleep(ctx, max(d, time.Millisecond)); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// call wraps do, an SDK call without retries, with the cookbook's limiter
// and retries.
func (c *cookbook) call(do call) call {
	return func(ctx context.Context, tk task) error {
		var err error
		for range c.maxAttempts {
			if err = c.wait(ctx, c.estimate(tk)); err != nil {
				return err
			}
			if err = do(ctx, tk); err == nil {
				return nil
			}
			if apiErr := (*openai.Error)(nil); errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusTooManyRequests {
				c.mu.Lock()
				c.lastRefusal = time.Now()
				c.mu.Unlock()
			}
		}
		return err
	}
}

// TestContrast runs the calls of the virtual-time OpenAI run through the
// usual ways of pacing an LLM API, beside polite: a plain client (the SDK
// with its retries off), go-retryablehttp with its defaults under the SDK
// (4 retries, Retry-After honoured, else 1 s doubling up to 30 s),
// openai-go's own retries, and the cookbook's static limiter set to the
// stated quotas and to half of them (the cookbook's default margin). It
// prints the table with -v, and holds polite to its bounds: every call
// succeeds, none is refused, at least 0.9 of a perfect client's throughput.
func TestContrast(t *testing.T) {
	cfg := virtual[0].cfg
	ts := workload(100)
	ideal := ratelimittest.IdealTokens(cfg, idealTasks(t, cfg.API, ts), 16)
	clients := []struct {
		name string
		make func(base http.RoundTripper) call
	}{
		{"polite", func(base http.RoundTripper) call {
			return openAICall(polite.NewClient(&polite.Transport{Base: base}), "http://llm.example")
		}},
		{"plain", func(base http.RoundTripper) call {
			return openAICall(&http.Client{Transport: base}, "http://llm.example")
		}},
		{"go-retryablehttp", func(base http.RoundTripper) call {
			rc := retryablehttp.NewClient()
			rc.HTTPClient = &http.Client{Transport: base}
			rc.Logger = nil
			return openAICall(rc.StandardClient(), "http://llm.example")
		}},
		{"openai-go retries", func(base http.RoundTripper) call {
			return openAIRetrying(&http.Client{Transport: base}, "http://llm.example")
		}},
		{"cookbook, stated quotas", func(base http.RoundTripper) call {
			return newCookbook(float64(cfg.Requests), float64(cfg.Tokens)).call(openAICall(&http.Client{Transport: base}, "http://llm.example"))
		}},
		{"cookbook, half", func(base http.RoundTripper) call {
			return newCookbook(float64(cfg.Requests)/2, float64(cfg.Tokens)/2).call(openAICall(&http.Client{Transport: base}, "http://llm.example"))
		}},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\nOpenAI-shaped server: %d tokens and %d requests a minute; %d calls, 16 workers; ideal %v\n\n",
		cfg.Tokens, cfg.Requests, len(ts), ideal.Round(time.Millisecond))
	fmt.Fprintf(&table, "| client | ok | failed | refused | took | efficiency | tokens/min |\n|---|---|---|---|---|---|---|\n")
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewTokenHandler(cfg)
				failed, took, err := run(t.Context(), cl.make(&ratelimittest.Transport{Handler: h}), ts, 16)
				st := h.Stats()
				eff := "—" // meaningless when calls failed
				if failed == 0 {
					eff = fmt.Sprintf("%.2f", ideal.Seconds()/took.Seconds())
				}
				fmt.Fprintf(&table, "| %s | %d | %d | %d | %v | %s | %.0f |\n", cl.name, len(ts)-failed, failed, st.Refused,
					took.Round(time.Millisecond), eff, float64(st.InputTokens+st.OutputTokens)/took.Minutes())
				if cl.name != "polite" {
					return
				}
				if failed > 0 || st.Refused > 0 {
					t.Errorf("polite: %d failed (first: %v), %d refused; want 0 and 0", failed, err, st.Refused)
				}
				if e := ideal.Seconds() / took.Seconds(); e < 0.9 {
					t.Errorf("polite: efficiency %.2f, want at least 0.9", e)
				}
			})
		})
	}
	t.Log(table.String())
}
