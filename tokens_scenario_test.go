package polite_test

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// tokenWorkload returns n tasks of varied prompts (70 to 1,500 tokens) and
// output bounds (64 to 1,024 tokens), the same on every run.
func tokenWorkload(n int) []ratelimittest.TokenTask {
	ts := make([]ratelimittest.TokenTask, n)
	for i := range ts {
		ts[i] = ratelimittest.TokenTask{Input: 70 + int64(i*389)%1431, MaxOutput: 64 + int64(i*173)%961}
	}
	return ts
}

// tokenScenario is one LLM API server a batch of tasks runs against.
type tokenScenario struct {
	name    string
	cfg     ratelimittest.TokenConfig
	tasks   int
	workers int

	// refused is the most refusals the run may see: 0 unless the server
	// counts prompts otherwise than the estimate, which only its answers
	// can teach (see DESIGN.md, "A server that counts more").
	refused int

	// delay is the network's, each way: answers are read that long after
	// they are written, and requests arrive that long after they are sent.
	delay time.Duration
}

// counted returns a TokenConfig.Prompt for a server whose tokenizer counts
// f times the estimate of a prompt.
func counted(f float64) func(int64) int64 {
	return func(estimate int64) int64 { return int64(math.Ceil(float64(estimate) * f)) }
}

func tokenScenarios() []tokenScenario {
	latency, per := 500*time.Millisecond, 5*time.Millisecond
	return []tokenScenario{
		{"openai 40k tokens/min, 500 requests/min", ratelimittest.TokenConfig{
			Requests: 500, Tokens: 40000, Latency: latency, TokenLatency: per,
		}, 150, 16, 0, 0},
		{"openai 40k tokens/min, retry-after (Azure)", ratelimittest.TokenConfig{
			Requests: 500, Tokens: 40000, Latency: latency, TokenLatency: per, RetryAfter: true,
		}, 150, 16, 0, 0},
		{"openai 40k tokens/min, 100 workers", ratelimittest.TokenConfig{
			Requests: 500, Tokens: 40000, Latency: latency, TokenLatency: per,
		}, 150, 100, 0, 0},
		{"openai 200k tokens/min, short answers", ratelimittest.TokenConfig{
			Requests: 5000, Tokens: 200000, Latency: 200 * time.Millisecond, TokenLatency: time.Millisecond,
		}, 300, 16, 0, 0},
		{"anthropic 30k in + 16k out/min, refunds", ratelimittest.TokenConfig{
			API: ratelimittest.AnthropicAPI, Requests: 500, InputTokens: 30000, OutputTokens: 16000,
			Latency: latency, TokenLatency: per, Refund: true,
		}, 150, 16, 0, 0},
		{"anthropic 30k in + 8k out/min", ratelimittest.TokenConfig{
			API: ratelimittest.AnthropicAPI, Requests: 500, InputTokens: 30000, OutputTokens: 8000,
			Latency: latency, TokenLatency: per,
		}, 150, 16, 0, 0},
		// Anthropic states the tokens left to the nearest thousand: read
		// as exact, a stated 5000 let a request of 4900 go into 4600 (32
		// and 45 refused), and a stated 0, read as none left, made a
		// refill rate above the true one.
		{"anthropic 30k in + 8k out/min, tokens left rounded to 1000", ratelimittest.TokenConfig{
			API: ratelimittest.AnthropicAPI, Requests: 500, InputTokens: 30000, OutputTokens: 8000,
			Latency: latency, TokenLatency: per, RoundRemaining: 1000,
		}, 150, 16, 0, 0},
		{"anthropic 40k in + 8k out/min, tokens left rounded to 1000, 100 workers", ratelimittest.TokenConfig{
			API: ratelimittest.AnthropicAPI, Requests: 500, InputTokens: 40000, OutputTokens: 8000,
			Latency: latency, TokenLatency: per, RoundRemaining: 1000,
		}, 200, 100, 0, 0},
		// Long runs, where the requests that cost most wait while smaller
		// ones go: they failed at MaxWait (16 of 400 and 5 of 200) until
		// one held as long as its quota takes to be whole claims a turn of
		// the requests that cost.
		{"openai 40k tokens/min, 100 workers, 400 tasks", ratelimittest.TokenConfig{
			Requests: 1000, Tokens: 40000, Latency: latency, TokenLatency: per,
		}, 400, 100, 0, 0},
		{"anthropic 40k in + 8k out/min, 50 requests/min", ratelimittest.TokenConfig{
			API: ratelimittest.AnthropicAPI, Requests: 50, InputTokens: 40000, OutputTokens: 8000,
			Latency: latency, TokenLatency: per,
		}, 200, 16, 0, 0},
		// The server's tokenizer counts more than the estimate: the first
		// requests are reserved too little, and their answers teach the
		// difference (at most 12 refused, measured up to 4 of 150 in 6
		// runs of each row).
		{"openai 40k tokens/min, prompts counted 1.3×", ratelimittest.TokenConfig{
			Requests: 500, Tokens: 40000, Latency: latency, TokenLatency: per, Prompt: counted(1.3),
		}, 150, 16, 12, 0},
		{"openai 40k tokens/min, prompts counted 1.3×, 100 workers", ratelimittest.TokenConfig{
			Requests: 500, Tokens: 40000, Latency: latency, TokenLatency: per, Prompt: counted(1.3),
		}, 150, 100, 12, 0},
		{"openai 40k tokens/min, prompts counted 1.03×", ratelimittest.TokenConfig{
			Requests: 500, Tokens: 40000, Latency: latency, TokenLatency: per, Prompt: counted(1.03),
		}, 150, 16, 12, 0},
		{"anthropic 30k in + 16k out/min, prompts counted 2×", ratelimittest.TokenConfig{
			API: ratelimittest.AnthropicAPI, Requests: 500, InputTokens: 30000, OutputTokens: 16000,
			Latency: latency, TokenLatency: per, Prompt: counted(2),
		}, 150, 16, 12, 0},
		{"openai 40k tokens/min, prompts counted 0.8×", ratelimittest.TokenConfig{
			Requests: 500, Tokens: 40000, Latency: latency, TokenLatency: per, Prompt: counted(0.8),
		}, 150, 16, 0, 0},
		// Over a network, the scale's samples count requests granted
		// between an answer's writing and its reading in the next one.
		{"openai 40k tokens/min, 300ms each way", ratelimittest.TokenConfig{
			Requests: 500, Tokens: 40000, Latency: latency, TokenLatency: per,
		}, 150, 100, 0, 300 * time.Millisecond},
		{"openai 40k tokens/min, prompts counted 1.3×, 300ms each way", ratelimittest.TokenConfig{
			Requests: 500, Tokens: 40000, Latency: latency, TokenLatency: per, Prompt: counted(1.3),
		}, 150, 100, 12, 300 * time.Millisecond},
		{"anthropic 30k in + 16k out/min, prompts counted 2×, 300ms each way", ratelimittest.TokenConfig{
			API: ratelimittest.AnthropicAPI, Requests: 500, InputTokens: 30000, OutputTokens: 16000,
			Latency: latency, TokenLatency: per, Prompt: counted(2),
		}, 150, 100, 12, 300 * time.Millisecond},
	}
}

// tokenResult is what one run of a token scenario measured.
type tokenResult struct {
	ok, failed, refused int
	used                int64 // tokens used: prompt plus output produced
	took, ideal         time.Duration
}

func (r tokenResult) efficiency() float64 { return r.ideal.Seconds() / r.took.Seconds() }

// perMinute is the token throughput: prompt and output tokens used a
// minute.
func (r tokenResult) perMinute() float64 { return float64(r.used) / r.took.Minutes() }

// runTokens sends the tasks' bodies with workers goroutines through c to
// h, and measures them: a task fails when its answer is not a 200.
func runTokens(t *testing.T, h *ratelimittest.TokenHandler, c *http.Client, api ratelimittest.API, tasks []ratelimittest.TokenTask, workers int) tokenResult {
	path := "/v1/chat/completions"
	if api == ratelimittest.AnthropicAPI {
		path = "/v1/messages"
	}
	var (
		next       atomic.Int64
		ok, failed atomic.Int64
		once       sync.Once
		wg         sync.WaitGroup
	)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(tasks) {
					return
				}
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://llm.example"+path, strings.NewReader(tasks[i].Body(api)))
				req.Header.Set("Content-Type", "application/json")
				resp, err := c.Do(req)
				if err != nil {
					failed.Add(1)
					once.Do(func() { t.Logf("first error: %v", err) })
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	st := h.Stats()
	return tokenResult{ok: int(ok.Load()), failed: int(failed.Load()), refused: st.Refused, used: st.InputTokens + st.OutputTokens, took: time.Since(start)}
}

// TestTokenScenarios runs polite with no configuration (the default
// estimator reads the request bodies) against LLM API servers whose token
// quotas bind, in virtual time: no request may be refused, and the run
// must reach 0.9 of the token throughput of a perfect client. A plain
// client runs beside it for contrast. Run with -scenarios -v to print the
// table.
func TestTokenScenarios(t *testing.T) {
	t.Parallel() // a bubble of its own: only the CPU is shared
	var table strings.Builder
	fmt.Fprintf(&table, "\n| server | workers | tasks | client | ok | failed | refused | took | ideal | efficiency | tokens/min |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, sc := range tokenScenarios() {
		tasks := tokenWorkload(sc.tasks)
		ideal := ratelimittest.IdealTokens(sc.cfg, tasks, sc.workers)
		for _, client := range []string{"polite", "plain"} {
			t.Run(sc.name+"/"+client, func(t *testing.T) {
				var r tokenResult
				synctest.Test(t, func(t *testing.T) {
					h := ratelimittest.NewTokenHandler(sc.cfg)
					var rt http.RoundTripper = &ratelimittest.Transport{Handler: h}
					if sc.delay > 0 {
						inner := rt
						rt = roundTripFunc(func(r *http.Request) (*http.Response, error) {
							time.Sleep(sc.delay)
							resp, err := inner.RoundTrip(r)
							time.Sleep(sc.delay)
							return resp, err
						})
					}
					if client == "polite" {
						rt = &polite.Transport{Base: rt}
					}
					r = runTokens(t, h, &http.Client{Transport: rt}, sc.cfg.API, tasks, sc.workers)
				})
				r.ideal = ideal
				eff := "—" // meaningless when tasks failed
				if r.failed == 0 {
					eff = fmt.Sprintf("%.3f", r.efficiency())
				}
				fmt.Fprintf(&table, "| %s | %d | %d | %s | %d | %d | %d | %v | %v | %s | %.0f |\n",
					sc.name, sc.workers, sc.tasks, client, r.ok, r.failed, r.refused, r.took.Round(time.Millisecond), ideal.Round(time.Millisecond), eff, r.perMinute())
				if client != "polite" {
					return
				}
				if r.ok != sc.tasks {
					t.Errorf("%d of %d tasks ok", r.ok, sc.tasks)
				}
				if r.refused > sc.refused {
					t.Errorf("%d requests refused, want at most %d", r.refused, sc.refused)
				}
				if e := r.efficiency(); e < 0.9 {
					t.Errorf("efficiency %.3f (took %v, ideal %v), want ≥ 0.9", e, r.took, ideal)
				}
			})
		}
	}
	if *scenarioTable {
		t.Log(table.String())
	}
}
