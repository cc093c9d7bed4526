package ratelimittest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

func ExampleNewTokenServer() {
	// A day's quota refills slowly enough that the real time between the
	// two requests gives back no whole token.
	srv := ratelimittest.NewTokenServer(ratelimittest.TokenConfig{Requests: 500, Tokens: 30000, Window: 24 * time.Hour})
	defer srv.Close()

	// 1,200 tokens of prompt and up to 20,000 of output: the second
	// request does not fit what is left of the day's 30,000 tokens.
	body := ratelimittest.TokenTask{Input: 1200, MaxOutput: 20000}.Body(ratelimittest.OpenAIAPI)
	for range 2 {
		resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			fmt.Println(err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, "remaining:", resp.Header.Get("X-Ratelimit-Remaining-Requests"), "requests,",
			resp.Header.Get("X-Ratelimit-Remaining-Tokens"), "tokens")
	}
	// Output:
	// 200 remaining: 499 requests, 8800 tokens
	// 429 remaining: 499 requests, 8800 tokens
}

func ExampleTokenHandler() {
	h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{
		API: ratelimittest.AnthropicAPI, Requests: 50, InputTokens: 30000, OutputTokens: 8000,
	})
	c := &http.Client{Transport: &ratelimittest.Transport{Handler: h}}

	body := `{"model":"claude-haiku-4-5","max_tokens":8,"messages":[{"role":"user","content":"Hello"}]}`
	resp, err := c.Post("http://api.anthropic.example/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.TrimSpace(string(b)))
	fmt.Println("input tokens left:", resp.Header.Get("Anthropic-Ratelimit-Input-Tokens-Remaining"))
	fmt.Println("output tokens left:", resp.Header.Get("Anthropic-Ratelimit-Output-Tokens-Remaining"))
	// Output:
	// 200 {"content":[{"text":"tok tok tok tok","type":"text"}],"id":"msg_1","model":"ratelimittest","role":"assistant","stop_reason":"end_turn","stop_sequence":null,"type":"message","usage":{"input_tokens":9,"output_tokens":4}}
	// input tokens left: 29991
	// output tokens left: 7992
}

func ExampleIdealTokens() {
	// An OpenAI-shaped quota of 30,000 tokens a minute, and 100 requests
	// of 1,000 tokens of prompt and 500 of output bound, each taking 2s.
	cfg := ratelimittest.TokenConfig{Requests: 500, Tokens: 30000, Latency: 2 * time.Second}
	tasks := make([]ratelimittest.TokenTask, 100)
	for i := range tasks {
		tasks[i] = ratelimittest.TokenTask{Input: 1000, MaxOutput: 500}
	}
	d := ratelimittest.IdealTokens(cfg, tasks, 16)
	fmt.Println(d)
	// A burst of 20 requests, then one every 3s.
	fmt.Printf("%.0f tokens charged a minute\n", float64(100*1500)/d.Minutes())
	// Output:
	// 4m2s
	// 37190 tokens charged a minute
}
