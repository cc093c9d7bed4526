package llm_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

func Example_openAI() {
	srv := ratelimittest.NewTokenServer(ratelimittest.TokenConfig{Requests: 500, Tokens: 30000})
	defer srv.Close()

	client := openai.NewClient(
		option.WithBaseURL(srv.URL+"/v1"),
		option.WithAPIKey("sk-test"),
		option.WithHTTPClient(polite.NewClient(&polite.Transport{})),
		option.WithMaxRetries(0), // polite paces and retries
	)
	resp, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:               openai.ChatModelGPT4oMini,
		Messages:            []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Write a haiku about rate limits.")},
		MaxCompletionTokens: openai.Int(100),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Usage.PromptTokens, "prompt tokens,", resp.Usage.CompletionTokens, "completion tokens")
	// Output: 16 prompt tokens, 50 completion tokens
}

func Example_anthropic() {
	srv := ratelimittest.NewTokenServer(ratelimittest.TokenConfig{
		API: ratelimittest.AnthropicAPI, Requests: 50, InputTokens: 30000, OutputTokens: 8000,
	})
	defer srv.Close()

	client := anthropic.NewClient(
		anthropicoption.WithBaseURL(srv.URL),
		anthropicoption.WithAPIKey("sk-ant-test"),
		anthropicoption.WithHTTPClient(polite.NewClient(&polite.Transport{})),
		anthropicoption.WithMaxRetries(0), // polite paces and retries
	)
	msg, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeHaiku4_5,
		MaxTokens: 100,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Write a haiku about rate limits."))},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(msg.Usage.InputTokens, "input tokens,", msg.Usage.OutputTokens, "output tokens")
	// Output: 16 input tokens, 50 output tokens
}

// task is one call of a workload: a prompt and an output bound.
type task struct {
	prompt    string
	maxTokens int64
}

// workload returns n calls of varied prompt sizes (70 to 1,500 tokens) and
// output bounds (64 to 1,024 tokens), the same on every run.
func workload(n int) []task {
	const sentence = "Summarise the state of the parking rules downtown. "
	ts := make([]task, n)
	for i := range ts {
		ts[i] = task{
			prompt:    strings.Repeat(sentence, 5+(i*37)%100),
			maxTokens: 64 + int64(i*173)%961,
		}
	}
	return ts
}

// idealTasks reports what a token server charges for ts, through the SDK
// of api: the bodies the SDKs send estimate as those of TokenTask.Body.
func idealTasks(t *testing.T, api ratelimittest.API, ts []task) []ratelimittest.TokenTask {
	t.Helper()
	out := make([]ratelimittest.TokenTask, len(ts))
	for i, tk := range ts {
		path, body := "/v1/chat/completions", fmt.Sprintf(`{"messages":[{"content":%q,"role":"user"}],"model":"gpt-4o-mini","max_completion_tokens":%d}`, tk.prompt, tk.maxTokens)
		if api == ratelimittest.AnthropicAPI {
			path, body = "/v1/messages", fmt.Sprintf(`{"max_tokens":%d,"messages":[{"content":[{"text":%q,"type":"text"}],"role":"user"}],"model":"claude-haiku-4-5"}`, tk.maxTokens, tk.prompt)
		}
		var ok bool
		if out[i], ok = ratelimittest.EstimateTask(path, body); !ok {
			t.Fatalf("task %d: not estimated", i)
		}
	}
	return out
}

// call is one SDK call of a task; it reports the SDK's error.
type call func(ctx context.Context, tk task) error

func openAICall(c *http.Client, baseURL string) call {
	client := openai.NewClient(
		option.WithBaseURL(baseURL+"/v1"),
		option.WithAPIKey("sk-test"),
		option.WithHTTPClient(c),
		option.WithMaxRetries(0),
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

func anthropicCall(c *http.Client, baseURL string) call {
	client := anthropic.NewClient(
		anthropicoption.WithBaseURL(baseURL),
		anthropicoption.WithAPIKey("sk-ant-test"),
		anthropicoption.WithHTTPClient(c),
		anthropicoption.WithMaxRetries(0),
	)
	return func(ctx context.Context, tk task) error {
		_, err := client.Messages.New(ctx, anthropic.MessageNewParams{
			Model:     anthropic.ModelClaudeHaiku4_5,
			MaxTokens: tk.maxTokens,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(tk.prompt))},
		})
		return err
	}
}

// run makes the calls of ts with workers concurrent workers, and reports
// how many failed and how long they all took.
func run(ctx context.Context, do call, ts []task, workers int) (failed int, took time.Duration, first error) {
	var (
		next  atomic.Int64
		fails atomic.Int64
		once  sync.Once
		wg    sync.WaitGroup
	)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ts) {
					return
				}
				if err := do(ctx, ts[i]); err != nil {
					fails.Add(1)
					once.Do(func() { first = err })
				}
			}
		})
	}
	wg.Wait()
	return int(fails.Load()), time.Since(start), first
}

// The loopback runs: a small quota refilled every second, so that the run
// takes a few seconds of real time, with tokens binding. Polite paces
// them as in virtual time: every call succeeds and none is refused.
var loopback = []struct {
	name string
	cfg  ratelimittest.TokenConfig
	sdk  func(*http.Client, string) call
}{
	{"openai", ratelimittest.TokenConfig{Window: time.Second, Requests: 200, Tokens: 30000, Latency: 20 * time.Millisecond}, openAICall},
	{"anthropic", ratelimittest.TokenConfig{
		API: ratelimittest.AnthropicAPI, Window: time.Second, Requests: 200, InputTokens: 25000, OutputTokens: 15000,
		Latency: 20 * time.Millisecond, Refund: true,
	}, anthropicCall},
}

func TestSDKsOverLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for seconds of real time")
	}
	for _, tt := range loopback {
		t.Run(tt.name, func(t *testing.T) {
			srv := ratelimittest.NewTokenServer(tt.cfg)
			defer srv.Close()
			tr := &polite.Transport{Base: srv.Client().Transport}
			defer tr.CloseIdleConnections()
			ts := workload(120)
			ideal := ratelimittest.IdealTokens(tt.cfg, idealTasks(t, tt.cfg.API, ts), 16)
			failed, took, err := run(t.Context(), tt.sdk(polite.NewClient(tr), srv.URL), ts, 16)
			st := srv.Handler.Stats()
			t.Logf("%d calls in %v (ideal %v, efficiency %.2f): %d failed, server saw %d requests, refused %d",
				len(ts), took.Round(time.Millisecond), ideal.Round(time.Millisecond), ideal.Seconds()/took.Seconds(), failed, st.Requests, st.Refused)
			if failed > 0 {
				t.Errorf("%d of %d calls failed; first: %v", failed, len(ts), err)
			}
			if st.Admitted != len(ts) || st.Refused != 0 {
				t.Errorf("server admitted %d requests and refused %d, want %d and 0", st.Admitted, st.Refused, len(ts))
			}
		})
	}
}

// The virtual-time runs: per-minute quotas as the APIs state them, where
// tokens bind and requests are generous, 16 workers, and a latency that
// grows with the output.
var virtual = []struct {
	name string
	cfg  ratelimittest.TokenConfig
	sdk  func(*http.Client, string) call
}{
	{"openai", ratelimittest.TokenConfig{
		Requests: 500, Tokens: 40000, Latency: 500 * time.Millisecond, TokenLatency: 5 * time.Millisecond,
	}, openAICall},
	{"anthropic", ratelimittest.TokenConfig{
		API: ratelimittest.AnthropicAPI, Requests: 500, InputTokens: 30000, OutputTokens: 16000,
		Latency: 500 * time.Millisecond, TokenLatency: 5 * time.Millisecond, Refund: true,
	}, anthropicCall},
}

// TestSDKsNoRefusals runs both SDKs over polite with no configuration
// against token servers in virtual time, and holds polite to what pacing by
// tokens must give: every call succeeds, no request is refused, and the run
// reaches 0.9 of the throughput of a perfect client.
func TestSDKsNoRefusals(t *testing.T) {
	for _, tt := range virtual {
		t.Run(tt.name, func(t *testing.T) {
			ts := workload(100)
			tasks := idealTasks(t, tt.cfg.API, ts)
			ideal := ratelimittest.IdealTokens(tt.cfg, tasks, 16)
			var charged int64
			for _, tk := range tasks {
				charged += tk.Input + tk.MaxOutput
			}
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewTokenHandler(tt.cfg)
				c := polite.NewClient(&polite.Transport{Base: &ratelimittest.Transport{Handler: h}})
				failed, took, err := run(t.Context(), tt.sdk(c, "http://llm.example"), ts, 16)
				st := h.Stats()
				eff := float64(ideal) / float64(took)
				t.Logf("%d calls in %v (ideal %v, efficiency %.2f): %d failed, %d refused", len(ts), took, ideal, eff, failed, st.Refused)
				if failed > 0 {
					t.Errorf("%d of %d calls failed; first: %v", failed, len(ts), err)
				}
				if st.Charged != charged {
					t.Errorf("the server charged %d tokens, the ideal assumes %d", st.Charged, charged)
				}
				if st.Refused > 0 {
					t.Errorf("the server refused %d requests, want 0", st.Refused)
				}
				if eff < 0.9 {
					t.Errorf("efficiency %.2f, want at least 0.9", eff)
				}
			})
		})
	}
}
