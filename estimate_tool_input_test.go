package polite_test

import (
	"strings"
	"testing"
)

// An Anthropic tool_use's "input" is a JSON object the server tokenizes
// whole, keys and numbers included, but the estimate counted only its
// string values: a plot tool given 20,000 data points (180 KB) was
// estimated at 25 input tokens. Its keys and numbers count as text now,
// half a token a digit or a punctuation mark, as a tool definition's keys
// do.
func TestEstimateToolUseInputNumbers(t *testing.T) {
	body := `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"Plot it"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"plot","input":{"values":[` +
		strings.Repeat("12.345678,", 20_000) + `1]}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"done"}]}]}`
	// A number of 8 digits and a point is at least 3 tokens in o200k_base
	// and cl100k_base (digits are split in runs of 3).
	if c := estimateOf("/v1/messages", body); c.InputTokens < 20_000*3 {
		t.Errorf("a %d-byte tool_use input of 20,000 numbers: EstimateCost = %v, want input-tokens >= 60,000", len(body), c)
	}
	// Its keys count as well: 2,000 keys of 8 letters, 2 tokens each.
	var kv []string
	for i := range 2000 {
		kv = append(kv, `"k`+strings.Repeat(string(rune('a'+i%26)), 7)+`":true`)
	}
	keys := `{"model":"m","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{` +
		strings.Join(kv, ",") + `}}]}]}`
	if c := estimateOf("/v1/messages", keys); c.InputTokens < 2000*2 {
		t.Errorf("a tool_use input of 2,000 keys: EstimateCost = %v, want input-tokens >= 4,000", c)
	}
	// A top-level "input" (the Responses API) and numbers elsewhere in a
	// message are not a tool's input.
	resp := `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}],"metadata":{"n":[` + strings.Repeat("1234,", 1000) + `1]}}`
	if c := estimateOf("/v1/responses", resp); c.InputTokens > 100 {
		t.Errorf("a Responses body with numbers outside its prompt: EstimateCost = %v, want input-tokens <= 100", c)
	}
}
