package polite

import (
	"net/http"
	"strings"
	"testing"
)

// A body over the 1 MiB bound is estimated from its first MiB (the
// llmcost doc). One whose prompt's key came past the bound, after a long
// system prompt or tool definitions, as Anthropic's SDK examples order a
// request ({model, max_tokens, system, messages}), was estimated at the
// zero Cost: the largest requests were paced as free.
func TestEstimateCostPromptKeyPastBound(t *testing.T) {
	for _, tc := range []struct{ path, body string }{
		{"/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":1024,"system":"` + strings.Repeat("abcd ", 250_000) +
			`","messages":[{"role":"user","content":"Summarise the above."}]}`},
		{"/v1/chat/completions", `{"model":"gpt-4.1","max_tokens":1024,"tools":[{"type":"function","function":{"name":"f","description":"` + strings.Repeat("abcd ", 250_000) +
			`"}}],"messages":[{"role":"user","content":"hi"}]}`},
	} {
		req, _ := http.NewRequest(http.MethodPost, "https://api.example"+tc.path, strings.NewReader(tc.body))
		if c := EstimateCost(req); c.InputTokens < 200_000 {
			t.Errorf("%s: a %d-byte body, its first MiB prompt: EstimateCost = %v, want its first MiB counted", tc.path, len(tc.body), c)
		}
	}
}

// A Responses input_file named by file_url was counted as the text of its
// URL (19 tokens) rather than as a file (EstimateCost: "an image or a
// file counts 1,600 tokens whatever its size").
func TestEstimateCostFileURL(t *testing.T) {
	body := `{"model":"gpt-4.1","max_output_tokens":100,"input":[{"role":"user","content":[` +
		`{"type":"input_file","file_url":"https://example.com/report.pdf"},{"type":"input_text","text":"Summarise"}]}]}`
	req, _ := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/responses", strings.NewReader(body))
	if c := EstimateCost(req); c.InputTokens < 1600 {
		t.Errorf("EstimateCost = %v, want at least the 1,600 tokens of a file", c)
	}
}
