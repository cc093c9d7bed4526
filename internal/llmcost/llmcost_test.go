package llmcost

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestKindOf(t *testing.T) {
	tests := []struct {
		path string
		want Kind
	}{
		{"/v1/chat/completions", Chat},
		{"/openai/deployments/gpt-4o/chat/completions", Chat},
		{"/openai/v1/chat/completions/", Chat},
		{"/api/v1/chat/completions", Chat},
		{"/v1/completions", Completions},
		{"/v1/responses", Responses},
		{"/v1/embeddings", Embeddings},
		{"/v1/messages", Messages},
		{"/v1/messages/count_tokens", None},
		{"/v1/models", None},
		{"/chat", None},
		{"", None},
		{"/", None},
	}
	for _, tt := range tests {
		if got := KindOf(tt.path); got != tt.want {
			t.Errorf("KindOf(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestRead(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		body   string
		want   Estimate
		wantOK bool
	}{
		{
			name: "chat",
			path: "/v1/chat/completions",
			// 15 + 5 quarter tokens of letters and spaces, 2 for "." and 2 for "!": 6 tokens
			body:   `{"model":"gpt-4o","messages":[{"role":"system","content":"You are helpful."},{"role":"user","content":"Hello!"}],"max_tokens":100}`,
			want:   Estimate{Kind: Chat, Input: 6 + 2*MessageTokens + RequestTokens, Output: 100, Max: 100, Choices: 1},
			wantOK: true,
		},
		{
			name:   "chat max_completion_tokens wins, n choices",
			path:   "/v1/chat/completions",
			body:   `{"messages":[{"role":"user","content":"abcd"}],"max_tokens":10,"max_completion_tokens":50,"n":3}`,
			want:   Estimate{Kind: Chat, Input: 1 + MessageTokens + RequestTokens, Output: 150, Max: 50, Choices: 3},
			wantOK: true,
		},
		{
			name:   "chat without a bound reserves the default",
			path:   "/v1/chat/completions",
			body:   `{"messages":[{"role":"user","content":"abcd"}],"max_tokens":null}`,
			want:   Estimate{Kind: Chat, Input: 1 + MessageTokens + RequestTokens, Output: DefaultMaxTokens, Max: DefaultMaxTokens, Choices: 1},
			wantOK: true,
		},
		{
			name: "chat with content parts and an image",
			path: "/v1/chat/completions",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":"abcdabcd"},` +
				`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo","detail":"high"}}]}],"max_tokens":5}`,
			want:   Estimate{Kind: Chat, Input: 2 + AttachmentTokens + MessageTokens + RequestTokens, Output: 5, Max: 5, Choices: 1},
			wantOK: true,
		},
		{
			name: "anthropic messages with system blocks and an image",
			path: "/v1/messages",
			body: `{"model":"claude-sonnet-4-5","max_tokens":1024,"system":[{"type":"text","text":"abcd","cache_control":{"type":"ephemeral"}}],` +
				`"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQ"}},{"type":"text","text":"abcdabcd"}]},` +
				`{"role":"assistant","content":"abcd"}]}`,
			want:   Estimate{Kind: Messages, Input: 1 + 2 + 1 + AttachmentTokens + 2*MessageTokens + RequestTokens, Output: 1024, Max: 1024, Choices: 1},
			wantOK: true,
		},
		{
			name:   "responses",
			path:   "/v1/responses",
			body:   `{"model":"gpt-5","instructions":"abcd","input":"abcdabcd","max_output_tokens":2000}`,
			want:   Estimate{Kind: Responses, Input: 3 + RequestTokens, Output: 2000, Max: 2000, Choices: 1},
			wantOK: true,
		},
		{
			name:   "responses with input items",
			path:   "/v1/responses",
			body:   `{"input":[{"role":"user","content":[{"type":"input_text","text":"abcd"},{"type":"input_image","image_url":"https://example.com/a.png"}]}]}`,
			want:   Estimate{Kind: Responses, Input: 1 + AttachmentTokens + MessageTokens + RequestTokens, Output: DefaultMaxTokens, Max: DefaultMaxTokens, Choices: 1},
			wantOK: true,
		},
		{
			name:   "embeddings of strings",
			path:   "/v1/embeddings",
			body:   `{"model":"text-embedding-3-small","input":["abcd","abcdabcd"],"dimensions":256}`,
			want:   Estimate{Kind: Embeddings, Input: 3, Inputs: 2, Choices: 1},
			wantOK: true,
		},
		{
			name:   "embeddings of one string",
			path:   "/v1/embeddings",
			body:   `{"input":"abcdabcd"}`,
			want:   Estimate{Kind: Embeddings, Input: 2, Inputs: 1, Choices: 1},
			wantOK: true,
		},
		{
			name:   "embeddings of token arrays",
			path:   "/v1/embeddings",
			body:   `{"input":[[1,2,3],[4,5]]}`,
			want:   Estimate{Kind: Embeddings, Input: 5, Inputs: 2, Choices: 1},
			wantOK: true,
		},
		{
			name:   "legacy completions",
			path:   "/v1/completions",
			body:   `{"model":"gpt-3.5-turbo-instruct","prompt":"abcd","suffix":"abcd","n":2,"best_of":4}`,
			want:   Estimate{Kind: Completions, Input: 2 + RequestTokens, Output: 4 * CompletionsMaxTokens, Max: CompletionsMaxTokens, Choices: 4},
			wantOK: true,
		},
		{
			// A completion for each prompt of a batch: the bound was one
			// prompt's, a quarter of it.
			name:   "legacy completions, a batch of prompts",
			path:   "/v1/completions",
			body:   `{"model":"gpt-3.5-turbo-instruct","prompt":["abcd","abcd","abcd","abcd"],"max_tokens":1000}`,
			want:   Estimate{Kind: Completions, Input: 4 + RequestTokens, Output: 4000, Max: 1000, Choices: 4},
			wantOK: true,
		},
		{
			name:   "legacy completions, a batch of token arrays",
			path:   "/v1/completions",
			body:   `{"model":"gpt-3.5-turbo-instruct","prompt":[[1,2],[3]],"n":2,"max_tokens":10}`,
			want:   Estimate{Kind: Completions, Input: 3 + RequestTokens, Output: 40, Max: 10, Choices: 4},
			wantOK: true,
		},
		{
			name:   "legacy completions, one prompt of tokens",
			path:   "/v1/completions",
			body:   `{"model":"gpt-3.5-turbo-instruct","prompt":[1,2,3],"max_tokens":10}`,
			want:   Estimate{Kind: Completions, Input: 3 + RequestTokens, Output: 10, Max: 10, Choices: 1},
			wantOK: true,
		},
		{
			name: "tools count their keys",
			path: "/v1/chat/completions",
			body: `{"messages":[{"role":"user","content":"abcd"}],"max_tokens":1,` +
				`"tools":[{"type":"function","function":{"name":"abcd","parameters":{"type":"object","properties":{"abcd":{"type":"string"}}}}}]}`,
			// values: function, abcd, object, string (8+4+6+6 letters) and
			// keys: type, function, name, parameters, type, properties, abcd, type (4+8+4+10+4+10+4+4)
			want:   Estimate{Kind: Chat, Input: 1 + (24+48+3)/4 + MessageTokens + RequestTokens, Output: 1, Max: 1, Choices: 1},
			wantOK: true,
		},
		{
			name:   "escapes count the characters they stand for",
			path:   "/v1/chat/completions",
			body:   `{"messages":[{"role":"user","content":"\u4f60\u597d\ud83d\ude00\u00e9a\n"}],"max_tokens":1}`,
			want:   Estimate{Kind: Chat, Input: (4+4+4+2+1+1+3)/4 + MessageTokens + RequestTokens, Output: 1, Max: 1, Choices: 1},
			wantOK: true,
		},
		{
			name:   "raw UTF-8 counts alike",
			path:   "/v1/chat/completions",
			body:   "{\"messages\":[{\"role\":\"user\",\"content\":\"你好😀éa\\n\"}],\"max_tokens\":1}",
			want:   Estimate{Kind: Chat, Input: (4+4+4+2+1+1+3)/4 + MessageTokens + RequestTokens, Output: 1, Max: 1, Choices: 1},
			wantOK: true,
		},
		{
			name:   "huge max_tokens saturates",
			path:   "/v1/chat/completions",
			body:   `{"messages":[],"max_tokens":99999999999999999999999,"n":100}`,
			want:   Estimate{Kind: Chat, Input: RequestTokens, Output: 1<<63 - 1, Max: 1<<63 - 1, Choices: 100},
			wantOK: true,
		},
		{
			name:   "fractional max_tokens is ignored",
			path:   "/v1/messages",
			body:   `{"messages":[],"max_tokens":1.5e3}`,
			want:   Estimate{Kind: Messages, Input: RequestTokens, Output: DefaultMaxTokens, Max: DefaultMaxTokens, Choices: 1},
			wantOK: true,
		},
		{name: "no messages", path: "/v1/chat/completions", body: `{"model":"gpt-4o"}`},
		{name: "unknown path", path: "/v1/models", body: `{"messages":[]}`},
		{name: "count_tokens", path: "/v1/messages/count_tokens", body: `{"messages":[]}`},
		{name: "not JSON", path: "/v1/chat/completions", body: `messages=hello`},
		{name: "an array", path: "/v1/chat/completions", body: `[{"messages":[]}]`},
		{name: "empty", path: "/v1/chat/completions", body: ``},
		{name: "unterminated", path: "/v1/chat/completions", body: `{"messages":[{"role":"user","content":"abc`},
		{name: "trailing garbage", path: "/v1/chat/completions", body: `{"messages":[]} x`},
		{name: "bad literal", path: "/v1/chat/completions", body: `{"messages":[],"stream":tru}`},
		{name: "bad escape", path: "/v1/chat/completions", body: `{"messages":["\x"]}`},
		{name: "control byte", path: "/v1/chat/completions", body: "{\"messages\":[\"a\tb\"]}"},
		{name: "mismatched brackets", path: "/v1/chat/completions", body: `{"messages":[}]`},
		{name: "too deep", path: "/v1/chat/completions", body: `{"messages":[],"x":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`},
		{
			name:   "deep but not too deep",
			path:   "/v1/chat/completions",
			body:   `{"messages":[],"x":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`,
			want:   Estimate{Kind: Chat, Input: RequestTokens, Output: DefaultMaxTokens, Max: DefaultMaxTokens, Choices: 1},
			wantOK: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readers := map[string]io.Reader{
				"strings.Reader": strings.NewReader(tt.body),
				"bytes.Reader":   bytes.NewReader([]byte(tt.body)),
				"one byte":       iotest.OneByteReader(strings.NewReader(tt.body)),
				"NopCloser":      io.NopCloser(bytes.NewReader([]byte(tt.body))),
			}
			for name, r := range readers {
				got, ok := Read(r, tt.path, 0)
				if ok != tt.wantOK || got != tt.want {
					t.Errorf("%s: Read(%q, %q) = %+v, %v, want %+v, %v", name, tt.body, tt.path, got, ok, tt.want, tt.wantOK)
				}
			}
		})
	}
}

// TestReadBound checks that Read counts no more than its bound, estimates
// a truncated body from its prefix and reports it truncated, and skims the
// rest for the output bound.
func TestReadBound(t *testing.T) {
	body := `{"model":"x","messages":[{"role":"user","content":"` + strings.Repeat("abcd", 1000) + `"}],"max_tokens":7}`
	const limit = 2000
	for _, r := range []io.Reader{strings.NewReader(body), iotest.OneByteReader(strings.NewReader(body)), iotest.HalfReader(strings.NewReader(body))} {
		got, ok := Read(r, "/v1/chat/completions", limit)
		if !ok || !got.Truncated || got.Output != 7 {
			t.Errorf("Read(%d-byte body, limit %d) = %+v, %v, want a truncated estimate with the output bound skimmed", len(body), limit, got, ok)
		}
		// The prefix holds 2000 - 51 bytes of the content.
		if want := int64((limit-51+3)/4 + MessageTokens + RequestTokens); got.Input != want {
			t.Errorf("Read(%d-byte body, limit %d).Input = %d, want %d", len(body), limit, got.Input, want)
		}
	}

	// A complete body exactly as long as the bound is not truncated.
	short := `{"messages":[]}`
	got, ok := Read(iotest.OneByteReader(strings.NewReader(short)), "/v1/chat/completions", int64(len(short)))
	if !ok || got.Truncated {
		t.Errorf("Read(%q, limit %d) = %+v, %v, want a complete estimate", short, len(short), got, ok)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"messages":[`), iotest.ErrReader(io.ErrUnexpectedEOF))
	if got, ok := Read(r, "/v1/chat/completions", 0); ok {
		t.Errorf("Read(failing reader) = %+v, true, want false", got)
	}
}

func TestReadAllocs(t *testing.T) {
	body := []byte(`{"model":"gpt-4o","messages":[{"role":"system","content":"You are helpful."},{"role":"user","content":"Hello!"}],"max_tokens":100}`)
	r := bytes.NewReader(body)
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(body)
		Read(r, "/v1/chat/completions", 0)
	})
	if allocs > 1 {
		t.Errorf("Read allocates %v times per call, want at most 1 (the scanner)", allocs)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(`{"model":"gpt-4o","messages":[{"role":"user","content":"Hello!"}],"max_tokens":100}`, uint8(Chat), int64(0))
	f.Add(`{"max_tokens":1024,"system":[{"type":"text","text":"abcd"}],"messages":[{"role":"user","content":[{"type":"image","source":{"data":"x"}}]}]}`, uint8(Messages), int64(40))
	f.Add(`{"input":[[1,2],[3]],"model":"e"}`, uint8(Embeddings), int64(0))
	f.Add(`{"input":"\u4f60\ud83d\ude00","max_output_tokens":9}`, uint8(Responses), int64(0))
	f.Add(`{"prompt":["a","b"],"n":200,"best_of":-1}`, uint8(Completions), int64(3))
	f.Add(`{"messages":`+strings.Repeat("[", 300), uint8(Chat), int64(0))
	paths := [...]string{"/x", "/chat/completions", "/completions", "/responses", "/embeddings", "/messages"}
	f.Fuzz(func(t *testing.T, body string, kind uint8, limit int64) {
		path := paths[int(kind)%len(paths)]
		a, okA := String(body, path, limit)
		b, okB := Read(iotest.OneByteReader(strings.NewReader(body)), path, limit)
		if a != b || okA != okB {
			t.Fatalf("Read(%q, %q, %d) = %+v, %v by String, %+v, %v by Read", body, path, limit, a, okA, b, okB)
		}
		if !okA {
			if a != (Estimate{}) {
				t.Fatalf("Read(%q) = %+v, false, want the zero Estimate", body, a)
			}
			return
		}
		if a.Input < 0 || a.Output < 0 || a.Max < 0 || a.Choices < 1 || a.Choices > maxChoices*maxPrompts || a.Total() < a.Input || a.Kind != KindOf(path) {
			t.Fatalf("Read(%q, %q) = %+v", body, path, a)
		}
		if limit <= 0 || limit > int64(len(body)) {
			if a.Truncated {
				t.Fatalf("Read(%q, limit %d) reports a truncated body", body, limit)
			}
			// Every quarter token comes from at least one byte; each
			// attachment from at least 2.
			if bound := int64(len(body))*AttachmentTokens + RequestTokens; a.Input > bound {
				t.Fatalf("Read(%q).Input = %d, more than %d", body, a.Input, bound)
			}
		}
	})
}

func BenchmarkRead(b *testing.B) {
	body := []byte(`{"model":"gpt-4o","messages":[{"role":"system","content":"` + strings.Repeat("You are a helpful assistant. ", 30) +
		`"},{"role":"user","content":"` + strings.Repeat("Summarise the following article in three bullet points. ", 200) + `"}],"max_tokens":500}`)
	r := bytes.NewReader(body)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r.Reset(body)
		if _, ok := Read(r, "/v1/chat/completions", 0); !ok {
			b.Fatal("not estimated")
		}
	}
}
