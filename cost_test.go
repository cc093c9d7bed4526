package polite

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/politehttp/polite/internal/llmcost"
)

func TestCostIn(t *testing.T) {
	tests := []struct {
		name string
		c    Cost
		unit string
		want int64
	}{
		{"zero requests", Cost{}, "requests", 1},
		{"zero concurrent", Cost{}, "concurrent-requests", 1},
		{"zero tokens", Cost{}, "tokens", 0},
		{"zero other", Cost{}, "points", 0},
		{"tokens", Cost{Tokens: 500, InputTokens: 100, OutputTokens: 100}, "tokens", 500},
		{"tokens from parts", Cost{InputTokens: 300, OutputTokens: 200}, "tokens", 500},
		{"tokens saturate", Cost{InputTokens: math.MaxInt64, OutputTokens: 1}, "tokens", math.MaxInt64},
		{"input", Cost{InputTokens: 300, OutputTokens: 200}, "input-tokens", 300},
		{"output", Cost{InputTokens: 300, OutputTokens: 200}, "output-tokens", 200},
		{"negative", Cost{Tokens: -5, InputTokens: -1, OutputTokens: 3}, "tokens", 3}, // Tokens zero: the parts
		{"negative parts", Cost{InputTokens: -1, OutputTokens: 3}, "tokens", 3},
		{"negative input", Cost{InputTokens: -1}, "input-tokens", 0},
		{"unit", Cost{Unit: "points", Amount: 50}, "points", 50},
		{"another unit", Cost{Unit: "points", Amount: 50}, "api-units", 0},
		{"unit negative", Cost{Unit: "points", Amount: -50}, "points", 0},
		{"unit cannot set requests", Cost{Unit: "requests", Amount: 5}, "requests", 1},
		{"unit cannot set tokens", Cost{Unit: "tokens", Amount: 5}, "tokens", 0},
		{"unit cannot set input-tokens", Cost{Unit: "input-tokens", Amount: 5, InputTokens: 2}, "input-tokens", 2},
		{"empty unit", Cost{Amount: 5}, "", 0},
		{"unit names are exact", Cost{Tokens: 5}, "Tokens", 0},
	}
	for _, tt := range tests {
		if got := tt.c.In(tt.unit); got != tt.want {
			t.Errorf("%s: %+v.In(%q) = %d, want %d", tt.name, tt.c, tt.unit, got, tt.want)
		}
	}
}

func TestCostString(t *testing.T) {
	tests := []struct {
		c    Cost
		want string
	}{
		{Cost{}, "tokens=0"},
		{Cost{Tokens: 7}, "tokens=7"},
		{Cost{InputTokens: 1200, OutputTokens: 400}, "tokens=1600 input-tokens=1200 output-tokens=400"},
		{Cost{Tokens: 3, Unit: "points", Amount: 5}, "tokens=3 points=5"},
		{Cost{Unit: "requests", Amount: 5}, "tokens=0"},
		{Cost{Unit: "output-tokens", Amount: 5, OutputTokens: 1}, "tokens=1 output-tokens=1"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.c, got, tt.want)
		}
	}
}

func TestWithCost(t *testing.T) {
	ctx := context.Background()
	if c, ok := costFrom(ctx); ok {
		t.Errorf("costFrom(Background) = %v, true, want none", c)
	}
	want := Cost{InputTokens: 10, OutputTokens: 20}
	if got, ok := costFrom(WithCost(ctx, want)); !ok || got != want {
		t.Errorf("costFrom(WithCost(%v)) = %v, %v, want %v, true", want, got, ok, want)
	}
	// A declared zero Cost is declared.
	if got, ok := costFrom(WithCost(ctx, Cost{})); !ok || got != (Cost{}) {
		t.Errorf("costFrom(WithCost(zero)) = %v, %v, want the zero Cost, true", got, ok)
	}
	// The innermost declaration wins.
	inner := Cost{Tokens: 1}
	if got, _ := costFrom(WithCost(WithCost(ctx, want), inner)); got != inner {
		t.Errorf("costFrom(WithCost(WithCost(%v), %v)) = %v, want %v", want, inner, got, inner)
	}
}

const chatBody = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Write a haiku about rate limits."}],"max_tokens":100}`

// chatCost is the estimate of chatBody: 31 letters and spaces and a period
// make 9 tokens of text; a message and a request add 7.
var chatCost = Cost{Tokens: 116, InputTokens: 16, OutputTokens: 100}

// requestCost is what RoundTrip charges req: the Cost its context
// declares, else what Transport.Cost (fn) says, else the default estimate.
func requestCost(req *http.Request, fn func(*http.Request) Cost) Cost {
	if c, ok := costFrom(req.Context()); ok {
		return c
	}
	c, _, _ := (&Transport{Cost: fn}).estimate(req)
	return Cost(c)
}

func TestRequestCost(t *testing.T) {
	newReq := func(ctx context.Context) *http.Request {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://api.openai.com/v1/chat/completions", strings.NewReader(chatBody))
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	declared := Cost{Tokens: 42}
	computed := Cost{Tokens: 7}
	fn := func(*http.Request) Cost { return computed }
	tests := []struct {
		name string
		req  *http.Request
		fn   func(*http.Request) Cost
		want Cost
	}{
		{"estimate", newReq(context.Background()), nil, chatCost},
		{"Transport.Cost over the estimate", newReq(context.Background()), fn, computed},
		{"context over Transport.Cost", newReq(WithCost(context.Background(), declared)), fn, declared},
		{"declared zero", newReq(WithCost(context.Background(), Cost{})), fn, Cost{}},
	}
	for _, tt := range tests {
		if got := requestCost(tt.req, tt.fn); got != tt.want {
			t.Errorf("%s: requestCost = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// bodyProbe is a request body that records how it is used.
type bodyProbe struct {
	r      io.Reader
	read   int
	closed bool
}

func (b *bodyProbe) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += n
	return n, err
}

func (b *bodyProbe) Close() error { b.closed = true; return nil }

func TestEstimateCost(t *testing.T) {
	// The request's own body is never touched; GetBody's is read and closed.
	own := &bodyProbe{r: strings.NewReader(chatBody)}
	var opened []*bodyProbe
	req, _ := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", own)
	req.GetBody = func() (io.ReadCloser, error) {
		b := &bodyProbe{r: strings.NewReader(chatBody)}
		opened = append(opened, b)
		return b, nil
	}
	if got := EstimateCost(req); got != chatCost {
		t.Errorf("EstimateCost(chat request) = %v, want %v", got, chatCost)
	}
	if own.read != 0 || own.closed {
		t.Errorf("EstimateCost read %d bytes of req.Body (closed: %v), want none", own.read, own.closed)
	}
	if len(opened) != 1 || !opened[0].closed || opened[0].read != len(chatBody) {
		t.Errorf("EstimateCost opened %d bodies; want one, read whole and closed", len(opened))
	}

	// The bound holds: what follows it is skimmed, not counted.
	big := `{"messages":[{"role":"user","content":"` + strings.Repeat("abcd", 10000) + `"}]}`
	probe := &bodyProbe{r: strings.NewReader(big)}
	req.GetBody = func() (io.ReadCloser, error) { return probe, nil }
	got, ok := estimateCost(req, 1000)
	if !ok || probe.read != len(big) || !probe.closed {
		t.Errorf("estimateCost(%d-byte body, limit 1000) = %v, %v, read %d bytes (closed: %v); want an estimate from 1000 bytes, the rest skimmed",
			len(big), got, ok, probe.read, probe.closed)
	}
	if want := int64((1000-38+3)/4 + llmcost.MessageTokens + llmcost.RequestTokens); got.InputTokens != want {
		t.Errorf("estimateCost(%d-byte body, limit 1000).InputTokens = %d, want %d", len(big), got.InputTokens, want)
	}
}

func TestEstimateCostNone(t *testing.T) {
	calls := 0
	getBody := func(body string) func() (io.ReadCloser, error) {
		return func() (io.ReadCloser, error) {
			calls++
			return io.NopCloser(strings.NewReader(body)), nil
		}
	}
	tests := []struct {
		name    string
		url     string
		body    io.Reader
		getBody func() (io.ReadCloser, error)
		calls   int // of GetBody
	}{
		{"no body", "https://api.openai.com/v1/chat/completions", nil, nil, 0},
		{"not replayable", "https://api.openai.com/v1/chat/completions", io.MultiReader(strings.NewReader(chatBody)), nil, 0},
		{"other path", "https://api.example/v1/items", strings.NewReader(chatBody), getBody(chatBody), 0},
		{"not JSON", "https://api.openai.com/v1/chat/completions", strings.NewReader("x"), getBody("messages=hi"), 1},
		{"GetBody fails", "https://api.openai.com/v1/chat/completions", strings.NewReader(chatBody), func() (io.ReadCloser, error) {
			calls++
			return nil, errors.New("gone")
		}, 1},
		{"count_tokens", "https://api.anthropic.com/v1/messages/count_tokens", strings.NewReader(chatBody), getBody(chatBody), 0},
	}
	for _, tt := range tests {
		calls = 0
		req, _ := http.NewRequest(http.MethodPost, tt.url, tt.body)
		if tt.getBody != nil || tt.body == nil {
			req.GetBody = tt.getBody
		}
		if got := EstimateCost(req); got != (Cost{}) || calls != tt.calls {
			t.Errorf("%s: EstimateCost = %v after %d GetBody calls, want the zero Cost after %d", tt.name, got, calls, tt.calls)
		}
	}
	if got := EstimateCost(nil); got != (Cost{}) {
		t.Errorf("EstimateCost(nil) = %v, want the zero Cost", got)
	}
}

// TestEstimateCostDoc keeps the figures of EstimateCost's documentation in
// step with the estimator.
func TestEstimateCostDoc(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"Limit", llmcost.Limit, 1 << 20},
		{"BytesPerToken", llmcost.BytesPerToken, 4},
		{"MessageTokens", llmcost.MessageTokens, 4},
		{"RequestTokens", llmcost.RequestTokens, 3},
		{"AttachmentTokens", llmcost.AttachmentTokens, 1600},
		{"DefaultMaxTokens", llmcost.DefaultMaxTokens, 4096},
		{"CompletionsMaxTokens", llmcost.CompletionsMaxTokens, 16},
	} {
		if c.got != c.want {
			t.Errorf("llmcost.%s = %d; the documentation says %d", c.name, c.got, c.want)
		}
	}
}

func TestEstimateCostAllocs(t *testing.T) {
	body := []byte(chatBody)
	req, _ := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", bytes.NewReader(body))
	allocs := testing.AllocsPerRun(100, func() { EstimateCost(req) })
	// GetBody's reader and its NopCloser, and the scanner.
	if allocs > 3 {
		t.Errorf("EstimateCost allocates %v times, want at most 3", allocs)
	}
}

func FuzzEstimateCost(f *testing.F) {
	f.Add(chatBody, "/v1/chat/completions", int64(0))
	f.Add(`{"model":"claude","max_tokens":1024,"system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, "/v1/messages", int64(0))
	f.Add(`{"input":["a","b"]}`, "/openai/deployments/x/embeddings", int64(5))
	f.Add(`{"input":"x","instructions":"y","max_output_tokens":9}`, "/v1/responses/", int64(0))
	f.Add(`{"prompt":"x","best_of":3}`, "/v1/completions", int64(0))
	f.Add(strings.Repeat(`{"messages":[`, 100), "/v1/chat/completions", int64(0))
	f.Fuzz(func(t *testing.T, body, path string, limit int64) {
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/", strings.NewReader(body))
		if err != nil {
			t.Skip()
		}
		req.URL.Path = path
		own := req.Body
		a, okA := estimateCost(req, limit)
		b, okB := estimateCost(req, limit)
		if a != b || okA != okB {
			t.Fatalf("estimateCost(%q, %q) = %v, %v, then %v, %v", body, path, a, okA, b, okB)
		}
		if a.Tokens < 0 || a.InputTokens < 0 || a.OutputTokens < 0 || a.Tokens != addCost(a.InputTokens, a.OutputTokens) {
			t.Fatalf("estimateCost(%q, %q) = %v", body, path, a)
		}
		if !okA && a != (Cost{}) {
			t.Fatalf("estimateCost(%q, %q) = %v, false, want the zero Cost", body, path, a)
		}
		if rest, _ := io.ReadAll(own); string(rest) != body {
			t.Fatalf("estimateCost(%q) consumed req.Body", body)
		}
	})
}

func BenchmarkEstimateCost(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		content := strings.Repeat("Summarise the state of the parking rules downtown. ", size/51)
		body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are brief."},{"role":"user","content":"` + content + `"}],"max_tokens":500}`)
		req, _ := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", bytes.NewReader(body))
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if c := EstimateCost(req); c.Tokens == 0 {
					b.Fatal("no estimate")
				}
			}
		})
	}
	// A request to another API costs a path check.
	req, _ := http.NewRequest(http.MethodPost, "https://api.example/v1/items", strings.NewReader(`{"name":"x"}`))
	b.Run("other", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			EstimateCost(req)
		}
	})
}

// WithCost allocates what its doc says: the context, and the copy of the
// Cost it carries; reading it, nothing. The doc said it allocated nothing beyond the context.
func TestWithCostAllocs(t *testing.T) {
	ctx := context.Background()
	c := Cost{InputTokens: 1200, OutputTokens: 800}
	var sink context.Context
	if n := testing.AllocsPerRun(100, func() { sink = WithCost(ctx, c) }); n != 2 {
		t.Errorf("WithCost allocates %v times, want 2 as its doc says", n)
	}
	_ = sink
	ctx = WithCost(ctx, c)
	if n := testing.AllocsPerRun(100, func() { costFrom(ctx) }); n != 0 {
		t.Errorf("reading a declared Cost allocates %v times, want none", n)
	}
}
