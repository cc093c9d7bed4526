package ratelimittest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/parse"
	"github.com/politehttp/polite/ratelimittest"
)

const (
	chatPath     = "/v1/chat/completions"
	messagesPath = "/v1/messages"
)

// post sends body to path on c and returns the response and its body, read
// and closed.
func post(t *testing.T, c *http.Client, path, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://llm.example"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return resp, string(b)
}

// fieldsWith reports the header fields whose names start with prefix, plus
// retry-after, lower-cased, with one value each.
func fieldsWith(h http.Header, prefix string) map[string]string {
	m := make(map[string]string)
	for k, v := range h {
		k = strings.ToLower(k)
		if strings.HasPrefix(k, prefix) || strings.HasPrefix(k, "retry-after") {
			m[k] = v[0]
		}
	}
	return m
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestTokenHandlerOpenAI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 100, Tokens: 1000})
		c := client(h)
		task := ratelimittest.TokenTask{Input: 100, MaxOutput: 200}
		body := task.Body(ratelimittest.OpenAIAPI)

		steps := []struct {
			at     time.Duration
			status int
			fields map[string]string
		}{
			// 300 tokens a request; 1000 a minute refill 300 in 18s, and
			// 100 requests a minute one in 600ms.
			{0, 200, map[string]string{
				"x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "99", "x-ratelimit-reset-requests": "600ms",
				"x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "700", "x-ratelimit-reset-tokens": "18s",
			}},
			{0, 200, map[string]string{
				"x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "98", "x-ratelimit-reset-requests": "1.2s",
				"x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "400", "x-ratelimit-reset-tokens": "36s",
			}},
			{0, 200, map[string]string{
				"x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "97", "x-ratelimit-reset-requests": "1.8s",
				"x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "100", "x-ratelimit-reset-tokens": "54s",
			}},
			// 100 tokens left: refused, and charged nothing.
			{0, 429, map[string]string{
				"x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "97", "x-ratelimit-reset-requests": "1.8s",
				"x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "100", "x-ratelimit-reset-tokens": "54s",
			}},
			// 200 more tokens take 12s; a millisecond early is too early.
			{12*time.Second - time.Millisecond, 429, map[string]string{
				"x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "100", "x-ratelimit-reset-requests": "0s",
				"x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "299", "x-ratelimit-reset-tokens": "42.001s",
			}},
			{12 * time.Second, 200, map[string]string{
				"x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "99", "x-ratelimit-reset-requests": "600ms",
				"x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1m0s",
			}},
		}
		start := time.Now()
		for i, s := range steps {
			sleepUntil(start, s.at)
			resp, got := post(t, c, chatPath, body)
			if resp.StatusCode != s.status {
				t.Fatalf("step %d at %v: status %d, want %d: %s", i, s.at, resp.StatusCode, s.status, got)
			}
			if f := fieldsWith(resp.Header, "x-ratelimit-"); !equalMaps(f, s.fields) {
				t.Errorf("step %d at %v: fields\n%v\nwant\n%v", i, s.at, f, s.fields)
			}
			var v struct {
				Object string
				Usage  struct{ PromptTokens, CompletionTokens, TotalTokens int64 }
				Error  struct{ Message, Type, Code string }
			}
			if err := json.Unmarshal([]byte(got), &v); err != nil {
				t.Fatalf("step %d: body %q: %v", i, got, err)
			}
			if s.status == 200 && v.Object != "chat.completion" {
				t.Errorf("step %d: object %q, want chat.completion", i, v.Object)
			}
			if s.status == 429 && (v.Error.Type != "tokens" || v.Error.Code != "rate_limit_exceeded" || !strings.Contains(v.Error.Message, "Limit 1000")) {
				t.Errorf("step %d: error %+v, want a tokens rate_limit_exceeded", i, v.Error)
			}
		}
		st := h.Stats()
		if st.Requests != 6 || st.Admitted != 4 || st.Refused != 2 || st.Status[200] != 4 || st.Status[429] != 2 ||
			st.InputTokens != 400 || st.OutputTokens != 400 || st.Charged != 1200 {
			t.Errorf("Stats = %+v", st)
		}
	})
}

// TestTokenHandlerUsage checks the usage every API reports, and Refund.
func TestTokenHandlerUsage(t *testing.T) {
	tests := []struct {
		name   string
		cfg    ratelimittest.TokenConfig
		path   string
		body   string
		want   string // the usage object
		fields map[string]string
	}{
		{
			name: "chat",
			cfg:  ratelimittest.TokenConfig{Tokens: 1000},
			path: chatPath,
			body: ratelimittest.TokenTask{Input: 50, MaxOutput: 101}.Body(ratelimittest.OpenAIAPI),
			want: `{"completion_tokens":51,"prompt_tokens":50,"total_tokens":101}`,
			fields: map[string]string{
				"x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "849", "x-ratelimit-reset-tokens": "9.06s",
			},
		},
		{
			name: "chat with refund",
			cfg:  ratelimittest.TokenConfig{Tokens: 1000, Refund: true},
			path: chatPath,
			body: ratelimittest.TokenTask{Input: 50, MaxOutput: 101}.Body(ratelimittest.OpenAIAPI),
			want: `{"completion_tokens":51,"prompt_tokens":50,"total_tokens":101}`,
			fields: map[string]string{
				"x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "899", "x-ratelimit-reset-tokens": "6.06s",
			},
		},
		{
			name: "chat with an output function and n",
			cfg:  ratelimittest.TokenConfig{Output: func(bound int64) int64 { return bound + 1 }},
			path: chatPath,
			body: `{"messages":[{"role":"user","content":"abcd"}],"max_tokens":10,"n":2}`,
			want: `{"completion_tokens":20,"prompt_tokens":8,"total_tokens":28}`,
		},
		{
			name: "responses",
			cfg:  ratelimittest.TokenConfig{},
			path: "/v1/responses",
			body: `{"input":"abcd","max_output_tokens":9}`,
			want: `{"input_tokens":4,"input_tokens_details":{"cached_tokens":0},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":9}`,
		},
		{
			name: "embeddings",
			cfg:  ratelimittest.TokenConfig{Tokens: 100},
			path: "/openai/deployments/emb/embeddings",
			body: `{"input":["abcd","abcd"]}`,
			want: `{"prompt_tokens":2,"total_tokens":2}`,
			fields: map[string]string{
				"x-ratelimit-limit-tokens": "100", "x-ratelimit-remaining-tokens": "98", "x-ratelimit-reset-tokens": "1.2s",
			},
		},
		{
			name: "legacy completions",
			cfg:  ratelimittest.TokenConfig{},
			path: "/v1/completions",
			body: `{"prompt":"abcd"}`,
			want: `{"completion_tokens":8,"prompt_tokens":4,"total_tokens":12}`,
		},
		{
			name: "anthropic",
			cfg:  ratelimittest.TokenConfig{API: ratelimittest.AnthropicAPI, InputTokens: 600, OutputTokens: 300, Refund: true},
			path: messagesPath,
			body: ratelimittest.TokenTask{Input: 60, MaxOutput: 100}.Body(ratelimittest.AnthropicAPI),
			want: `{"input_tokens":60,"output_tokens":50}`,
			fields: map[string]string{
				"anthropic-ratelimit-input-tokens-limit": "600", "anthropic-ratelimit-input-tokens-remaining": "540",
				"anthropic-ratelimit-input-tokens-reset":  "2000-01-01T00:00:06Z",
				"anthropic-ratelimit-output-tokens-limit": "300", "anthropic-ratelimit-output-tokens-remaining": "250",
				"anthropic-ratelimit-output-tokens-reset": "2000-01-01T00:00:10Z",
				"anthropic-ratelimit-tokens-limit":        "900", "anthropic-ratelimit-tokens-remaining": "790",
				"anthropic-ratelimit-tokens-reset": "2000-01-01T00:00:10Z",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewTokenHandler(tt.cfg)
				resp, body := post(t, client(h), tt.path, tt.body)
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %s", resp.StatusCode, body)
				}
				var v struct{ Usage json.RawMessage }
				if err := json.Unmarshal([]byte(body), &v); err != nil {
					t.Fatal(err)
				}
				if string(v.Usage) != tt.want {
					t.Errorf("usage %s, want %s", v.Usage, tt.want)
				}
				if tt.fields != nil {
					prefix := "x-ratelimit-"
					if tt.cfg.API == ratelimittest.AnthropicAPI {
						prefix = "anthropic-ratelimit-"
					}
					if f := fieldsWith(resp.Header, prefix); !equalMaps(f, tt.fields) {
						t.Errorf("fields\n%v\nwant\n%v", f, tt.fields)
					}
				}
			})
		})
	}
}

// Anthropic's reset of a quota already whole is now, rounded up to the
// second, as for any other: it was rounded down, into the past.
func TestTokenHandlerAnthropicWholeReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{API: ratelimittest.AnthropicAPI, Requests: 50, InputTokens: 50})
		time.Sleep(500 * time.Millisecond)
		// Refused, above the input quota: the request quota stays whole.
		resp, _ := post(t, client(h), messagesPath, ratelimittest.TokenTask{Input: 100, MaxOutput: 10}.Body(ratelimittest.AnthropicAPI))
		v := resp.Header.Get("anthropic-ratelimit-requests-reset")
		reset, err := time.Parse(time.RFC3339, v)
		if resp.Header.Get("anthropic-ratelimit-requests-remaining") != "50" || err != nil || reset.Before(time.Now()) {
			t.Errorf("a whole request quota at %v: reset %q (%v), remaining %q; want a reset not before now",
				time.Now().UTC(), v, err, resp.Header.Get("anthropic-ratelimit-requests-remaining"))
		}
	})
}

func TestTokenHandlerAnthropic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{
			API: ratelimittest.AnthropicAPI, Requests: 50, InputTokens: 1000, OutputTokens: 400,
		})
		c := client(h)
		body := ratelimittest.TokenTask{Input: 100, MaxOutput: 300}.Body(ratelimittest.AnthropicAPI)

		resp, got := post(t, c, messagesPath, body)
		if resp.StatusCode != 200 || !strings.Contains(got, `"type":"message"`) {
			t.Fatalf("first request: %d %s", resp.StatusCode, got)
		}
		// The output quota has 100 tokens left; 200 more take 30s.
		resp, got = post(t, c, messagesPath, body)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "30" {
			t.Fatalf("second request: %d, Retry-After %q, want 429 after 30", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		var v struct {
			Type  string
			Error struct{ Type, Message string }
		}
		if err := json.Unmarshal([]byte(got), &v); err != nil || v.Type != "error" || v.Error.Type != "rate_limit_error" ||
			!strings.Contains(v.Error.Message, "output tokens per minute") {
			t.Errorf("refusal body %s (%v), want a rate_limit_error on output tokens", got, err)
		}

		// parse reads all four quotas, their resets measured from Date.
		quotas := parse.Header(resp.Header, time.Now())
		want := map[string][3]int64{ // limit, remaining, reset in seconds
			"requests":      {50, 49, 2},
			"input-tokens":  {1000, 900, 6},
			"output-tokens": {400, 100, 45},
			"tokens":        {1400, 1000, 45},
		}
		if len(quotas) != len(want) {
			t.Fatalf("parse.Header = %v, want %d quotas", quotas, len(want))
		}
		for _, q := range quotas {
			w, ok := want[q.Unit]
			if !ok || q.Limit != w[0] || q.Remaining != w[1] || q.Reset != time.Duration(w[2])*time.Second || q.Dialect != "anthropic" {
				t.Errorf("parse.Header: %+v, want limit, remaining, reset %v", q, w)
			}
		}

		time.Sleep(30 * time.Second)
		if resp, _ := post(t, c, messagesPath, body); resp.StatusCode != 200 {
			t.Errorf("after 30s: %d, want 200", resp.StatusCode)
		}
	})
}

// TestTokenHandlerParse checks that parse reads the OpenAI shape's fields.
func TestTokenHandlerParse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 60, Tokens: 6000})
		resp, _ := post(t, client(h), chatPath, ratelimittest.TokenTask{Input: 1000, MaxOutput: 2000}.Body(ratelimittest.OpenAIAPI))
		quotas := parse.Header(resp.Header, time.Now())
		want := []parse.Quota{
			{Unit: "requests", Limit: 60, Remaining: 59, Reset: time.Second, Window: 0, Dialect: "openai"},
			{Unit: "tokens", Limit: 6000, Remaining: 3000, Reset: 30 * time.Second, Window: 0, Dialect: "openai"},
		}
		if len(quotas) != len(want) {
			t.Fatalf("parse.Header = %+v, want %+v", quotas, want)
		}
		for i, q := range quotas {
			if q.Unit != want[i].Unit || q.Limit != want[i].Limit || q.Remaining != want[i].Remaining || q.Reset != want[i].Reset || q.Dialect != want[i].Dialect {
				t.Errorf("parse.Header[%d] = %+v, want %+v", i, q, want[i])
			}
		}
	})
}

func TestTokenHandlerRefusals(t *testing.T) {
	tests := []struct {
		name   string
		cfg    ratelimittest.TokenConfig
		path   string
		method string
		body   string
		status int
		fields map[string]string // retry-after fields
		errTyp string
	}{
		{
			name:   "too large",
			cfg:    ratelimittest.TokenConfig{Tokens: 1000, RetryAfter: true},
			path:   chatPath,
			body:   ratelimittest.TokenTask{Input: 100, MaxOutput: 1000}.Body(ratelimittest.OpenAIAPI),
			status: 429, fields: map[string]string{}, errTyp: "tokens",
		},
		{
			name:   "requests, with retry-after",
			cfg:    ratelimittest.TokenConfig{Requests: 1, Tokens: 1000, RetryAfter: true},
			path:   chatPath,
			body:   ratelimittest.TokenTask{Input: 10, MaxOutput: 10}.Body(ratelimittest.OpenAIAPI),
			status: 429, fields: map[string]string{"retry-after": "60", "retry-after-ms": "60000"}, errTyp: "requests",
		},
		{
			name:   "anthropic too large",
			cfg:    ratelimittest.TokenConfig{API: ratelimittest.AnthropicAPI, InputTokens: 50},
			path:   messagesPath,
			body:   ratelimittest.TokenTask{Input: 100, MaxOutput: 10}.Body(ratelimittest.AnthropicAPI),
			status: 429, fields: map[string]string{}, errTyp: "rate_limit_error",
		},
		{
			name:   "unknown path",
			cfg:    ratelimittest.TokenConfig{},
			path:   "/v1/models",
			body:   `{}`,
			status: 404, fields: map[string]string{}, errTyp: "invalid_request_error",
		},
		{
			name:   "anthropic serves no chat completions",
			cfg:    ratelimittest.TokenConfig{API: ratelimittest.AnthropicAPI},
			path:   chatPath,
			body:   `{"messages":[]}`,
			status: 404, fields: map[string]string{}, errTyp: "not_found_error",
		},
		{
			name:   "GET",
			cfg:    ratelimittest.TokenConfig{},
			path:   chatPath,
			method: http.MethodGet,
			status: 405, fields: map[string]string{}, errTyp: "invalid_request_error",
		},
		{
			name:   "bad body",
			cfg:    ratelimittest.TokenConfig{API: ratelimittest.AnthropicAPI},
			path:   messagesPath,
			body:   `{"max_tokens":10}`,
			status: 400, fields: map[string]string{}, errTyp: "invalid_request_error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewTokenHandler(tt.cfg)
				c := client(h)
				if tt.status == 429 && tt.name != "too large" && tt.name != "anthropic too large" {
					post(t, c, tt.path, tt.body) // spend the quota
				}
				method := tt.method
				if method == "" {
					method = http.MethodPost
				}
				req, _ := http.NewRequestWithContext(t.Context(), method, "http://llm.example"+tt.path, strings.NewReader(tt.body))
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.status {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
				}
				if f := fieldsWith(resp.Header, "retry-after"); !equalMaps(f, tt.fields) {
					t.Errorf("fields %v, want %v", f, tt.fields)
				}
				var v struct {
					Error struct{ Type string }
				}
				if err := json.Unmarshal(b, &v); err != nil || v.Error.Type != tt.errTyp {
					t.Errorf("body %s: error type %q, want %q", b, v.Error.Type, tt.errTyp)
				}
				if resp.Header.Get("Date") == "" {
					t.Error("no Date")
				}
				st := h.Stats()
				if st.Status[tt.status] != 1 {
					t.Errorf("Stats.Status = %v, want one %d", st.Status, tt.status)
				}
			})
		})
	}
}

func TestTokenHandlerLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{
			Latency: 300 * time.Millisecond, TokenLatency: 10 * time.Millisecond,
			Output: func(bound int64) int64 { return bound / 4 },
		})
		start := time.Now()
		resp, _ := post(t, client(h), chatPath, ratelimittest.TokenTask{Input: 10, MaxOutput: 400}.Body(ratelimittest.OpenAIAPI))
		if got, want := time.Since(start), 300*time.Millisecond+100*10*time.Millisecond; resp.StatusCode != 200 || got != want {
			t.Errorf("took %v (status %d), want %v", got, resp.StatusCode, want)
		}
		// A request whose client gives up is not answered, and not counted.
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example"+chatPath, strings.NewReader(`{"messages":[]}`))
		if _, err := client(h).Do(req); err == nil {
			t.Error("a cancelled request got a response")
		}
		if st := h.Stats(); st.Admitted != 2 || st.Status[200] != 1 || st.PeakInFlight != 1 {
			t.Errorf("Stats = %+v", st)
		}
	})
}

func TestTokenHandlerConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{
			Requests: 100, Tokens: 5000, Latency: time.Second,
		})
		c := client(h)
		body := ratelimittest.TokenTask{Input: 100, MaxOutput: 400}.Body(ratelimittest.OpenAIAPI)
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				for range 4 {
					post(t, c, chatPath, body)
				}
			})
		}
		wg.Wait()
		st := h.Stats()
		if st.Requests != 128 || st.Admitted+st.Refused != 128 || st.Admitted != 10 || st.PeakInFlight != 10 {
			t.Errorf("Stats = %+v, want 128 requests of which 10 admitted at once", st)
		}
		h.Reset()
		if st := h.Stats(); st.Requests != 0 || st.Charged != 0 {
			t.Errorf("after Reset, Stats = %+v", st)
		}
		if resp, _ := post(t, c, chatPath, body); resp.Header.Get("X-Ratelimit-Remaining-Tokens") != "4583" {
			t.Errorf("after Reset, remaining tokens %q, want 4583 (4500 and a second of refill)", resp.Header.Get("X-Ratelimit-Remaining-Tokens"))
		}
	})
}

func TestNewTokenHandlerPanics(t *testing.T) {
	for _, cfg := range []ratelimittest.TokenConfig{
		{API: "gemini"},
		{Window: -time.Second},
		{Tokens: -1},
		{InputTokens: 10},
		{API: ratelimittest.OpenAIAPI, OutputTokens: 10},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewTokenHandler(%+v) did not panic", cfg)
				}
			}()
			ratelimittest.NewTokenHandler(cfg)
		}()
	}
}

func TestTokenTaskBody(t *testing.T) {
	for _, task := range []ratelimittest.TokenTask{{Input: 7, MaxOutput: 0}, {Input: 8, MaxOutput: 1}, {Input: 12345, MaxOutput: 4096}} {
		for api, path := range map[ratelimittest.API]string{ratelimittest.OpenAIAPI: chatPath, ratelimittest.AnthropicAPI: messagesPath} {
			got, ok := ratelimittest.EstimateTask(path, task.Body(api))
			if !ok || got != task {
				t.Errorf("EstimateTask(%q, %v.Body(%s)) = %v, %v, want %v, true", path, task, api, got, ok, task)
			}
		}
	}
	if got, _ := ratelimittest.EstimateTask(chatPath, ratelimittest.TokenTask{Input: 1}.Body(ratelimittest.OpenAIAPI)); got.Input != 7 {
		t.Errorf("a 1-token task's body is estimated %d tokens, want 7", got.Input)
	}
}

func TestIdealTokens(t *testing.T) {
	task := ratelimittest.TokenTask{Input: 100, MaxOutput: 100}
	tasks := func(n int) []ratelimittest.TokenTask {
		ts := make([]ratelimittest.TokenTask, n)
		for i := range ts {
			ts[i] = task
		}
		return ts
	}
	tests := []struct {
		name    string
		cfg     ratelimittest.TokenConfig
		tasks   []ratelimittest.TokenTask
		workers int
		want    time.Duration
	}{
		{"none", ratelimittest.TokenConfig{Tokens: 1000}, nil, 4, 0},
		{"unlimited", ratelimittest.TokenConfig{Latency: time.Second}, tasks(10), 5, 2 * time.Second},
		// A burst of 5 tasks of 200 tokens, then one every 12s.
		{"tokens", ratelimittest.TokenConfig{Tokens: 1000}, tasks(10), 16, 60 * time.Second},
		{"tokens, one worker", ratelimittest.TokenConfig{Tokens: 1000, Latency: 20 * time.Second}, tasks(10), 1, 200 * time.Second},
		// Refunds of 50 tokens a task, given back when it ends.
		{"refund", ratelimittest.TokenConfig{Tokens: 1000, Refund: true}, tasks(10), 16, 33 * time.Second},
		{"requests", ratelimittest.TokenConfig{Requests: 2, Tokens: 100000}, tasks(6), 16, 2 * time.Minute},
		// Input 100 of 300 a minute, output 100 of 150: output binds, 100
		// tokens every 40s after the first 150.
		{"anthropic", ratelimittest.TokenConfig{API: ratelimittest.AnthropicAPI, InputTokens: 300, OutputTokens: 150}, tasks(4), 16, 100 * time.Second},
		{"too large", ratelimittest.TokenConfig{Tokens: 199}, tasks(1), 1, 1<<63 - 1},
		{"token latency", ratelimittest.TokenConfig{Latency: time.Second, TokenLatency: 10 * time.Millisecond}, tasks(1), 1, 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := ratelimittest.IdealTokens(tt.cfg, tt.tasks, tt.workers); got != tt.want {
			t.Errorf("%s: IdealTokens(%d tasks, %d workers) = %v, want %v", tt.name, len(tt.tasks), tt.workers, got, tt.want)
		}
	}
}

// TestTokenHandlerPrompt checks that a server whose tokenizer counts
// otherwise charges, reports and is simulated with its own count.
func TestTokenHandlerPrompt(t *testing.T) {
	cfg := ratelimittest.TokenConfig{Tokens: 1000, Prompt: func(e int64) int64 { return 2*e - 200 }}
	task := ratelimittest.TokenTask{Input: 250, MaxOutput: 100}
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(cfg)
		c := client(h)
		// 300 prompt tokens counted for 250 estimated, and 100 of output.
		resp, got := post(t, c, chatPath, task.Body(ratelimittest.OpenAIAPI))
		if resp.StatusCode != 200 || resp.Header.Get("X-Ratelimit-Remaining-Tokens") != "600" || !strings.Contains(got, `"prompt_tokens":300`) {
			t.Errorf("status %d, remaining %q, body %s; want 200, 600 and 300 prompt tokens", resp.StatusCode, resp.Header.Get("X-Ratelimit-Remaining-Tokens"), got)
		}
		// A count below zero is zero.
		small := ratelimittest.TokenTask{Input: 10, MaxOutput: 100}
		if resp, _ := post(t, c, chatPath, small.Body(ratelimittest.OpenAIAPI)); resp.Header.Get("X-Ratelimit-Remaining-Tokens") != "500" {
			t.Errorf("remaining %q after a prompt counted below zero, want 500", resp.Header.Get("X-Ratelimit-Remaining-Tokens"))
		}
		if st := h.Stats(); st.Charged != 500 || st.InputTokens != 300 {
			t.Errorf("Stats = %+v, want 500 charged, 300 input tokens", st)
		}
	})
	// Five tasks of 400 tokens against 1000 a minute: two at once, the
	// third 12 s later, then one every 24 s.
	tasks := []ratelimittest.TokenTask{task, task, task, task, task}
	if got, want := ratelimittest.IdealTokens(cfg, tasks, 4), 60*time.Second; got != want {
		t.Errorf("IdealTokens = %v, want %v", got, want)
	}
}

// TestIdealTokensReached runs a client that honours retry-after-ms against
// an OpenAI-shaped server whose quota refills a token every 10ms: it
// matches IdealTokens exactly.
func TestIdealTokensReached(t *testing.T) {
	cfg := ratelimittest.TokenConfig{Requests: 1000, Tokens: 6000, Latency: 2 * time.Second, RetryAfter: true}
	var tasks []ratelimittest.TokenTask
	for range 60 {
		tasks = append(tasks, ratelimittest.TokenTask{Input: 100, MaxOutput: 200})
	}
	const workers = 16
	want := ratelimittest.IdealTokens(cfg, tasks, workers)
	if want != 2*time.Minute+2*time.Second {
		t.Fatalf("IdealTokens = %v, want 2m2s", want)
	}
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(cfg)
		c := client(h)
		var mu sync.Mutex
		next := 0
		start := time.Now()
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					mu.Lock()
					if next == len(tasks) {
						mu.Unlock()
						return
					}
					task := tasks[next]
					next++
					mu.Unlock()
					for {
						resp, _ := post(t, c, chatPath, task.Body(ratelimittest.OpenAIAPI))
						if resp.StatusCode == http.StatusOK {
							break
						}
						ms, _ := strconv.Atoi(resp.Header.Get("Retry-After-Ms"))
						time.Sleep(time.Duration(ms) * time.Millisecond)
					}
				}
			})
		}
		wg.Wait()
		if got := time.Since(start); got != want {
			t.Errorf("client took %v, IdealTokens says %v", got, want)
		}
	})
}

// TokenStats embeds Stats, whose Bytes is "the number of content bytes
// written for admitted requests": a TokenHandler's JSON bodies count. It
// never added them.
func TestTokenStatsBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 10, Tokens: 100000})
		c := &http.Client{Transport: &ratelimittest.Transport{Handler: h}}
		resp, err := c.Post("http://api.test/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		st := h.Stats()
		if resp.StatusCode != 200 || st.Admitted != 1 {
			t.Fatalf("status %d, admitted %d", resp.StatusCode, st.Admitted)
		}
		if st.Bytes != n {
			t.Errorf("TokenStats.Bytes = %d, but the admitted request's body was %d bytes", st.Bytes, n)
		}
	})
}
