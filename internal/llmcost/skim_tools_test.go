package llmcost

import (
	"strings"
	"testing"
)

// Before the bound every string of a tool definition or schema ("tools",
// "functions", "tool_choice", "response_format", "text") is text, never an
// attachment; past it, text counts nothing. The first form of counting
// attachments past the bound counted an "image_url", "file_id", a "url" in
// an attachment's object, or a typed object's "data" inside a tool as
// AttachmentTokens: the bounded estimate exceeded the one that reads the
// whole body.
func TestSkimToolStringsCountNothing(t *testing.T) {
	const limit = 1000
	pad := strings.Repeat("abcd", 300) // the prompt runs past the bound
	for _, c := range []struct{ name, path, head, tools, tail string }{
		{"chat", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"` + pad + `"}],`,
			`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}},"image_url":"https://a.test/x.png"}]`, `,"max_tokens":5}`},
		{"responses image_generation mask", "/v1/responses", `{"model":"m","input":"` + pad + `",`,
			`"tools":[{"type":"image_generation","input_image_mask":{"file_id":"file-abc"}}]`, `}`},
		{"responses text schema", "/v1/responses", `{"model":"m","input":"` + pad + `",`,
			`"text":{"format":{"type":"json_schema","name":"x","schema":{"type":"object","data":"abc"}}}`, `}`},
	} {
		with, ok := String(c.head+c.tools+c.tail, c.path, limit)
		without, _ := String(c.head+strings.TrimPrefix(c.tail, ","), c.path, limit)
		whole, _ := String(c.head+c.tools+c.tail, c.path, 0)
		if !ok || with.Input != without.Input {
			t.Errorf("%s: tools past the bound: Input %d, want %d as without them (text past the bound counts nothing); the whole body counts %d",
				c.name, with.Input, without.Input, whole.Input)
		}
	}
}
