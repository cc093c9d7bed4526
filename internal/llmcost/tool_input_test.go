package llmcost

import (
	"fmt"
	"strings"
	"testing"
	"testing/iotest"
)

// A number in a tool_use input that begins before the bound and runs past
// it counts no more once skimmed, as a string in progress does: past the
// bound no text counts, so how far the number runs past it does not
// change the estimate. The first form of counting a tool call's numbers
// counted it on, 2 units a byte, for as far as it ran.
func TestToolInputNumberPastBound(t *testing.T) {
	pre := `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{"x":`
	body := func(past int) string {
		digits := Limit - len(pre) + past // the number starts before the bound
		return pre + strings.Repeat("1", digits) + `}}]}]}`
	}
	short, okS := String(body(10), "/v1/messages", 0)
	long, okL := String(body(1<<20), "/v1/messages", 0)
	if !okS || !okL || !short.Truncated || !long.Truncated {
		t.Fatalf("ok %v %v, truncated %v %v", okS, okL, short.Truncated, long.Truncated)
	}
	if long.Input != short.Input {
		t.Errorf("a number running 1 MiB past the bound: Input = %d, want %d (as when it ends 10 bytes past it)", long.Input, short.Input)
	}
	// Byte at a time, the same.
	r, _ := Read(iotest.OneByteReader(strings.NewReader(body(1<<20))), "/v1/messages", 0)
	if r.Input != short.Input {
		t.Errorf("Read byte at a time: Input = %d, want %d", r.Input, short.Input)
	}
}

// A tool_use input is tokenized whole, its literals (true, false, null)
// too: 20,001 of them (100 KB) were estimated as an empty input.
func TestToolInputLiterals(t *testing.T) {
	empty := `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{"m":[]}}]}]}`
	body := `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{"m":[` +
		strings.Repeat("true,null,", 10_000) + `false]}}]}]}`
	e0, _ := String(empty, "/v1/messages", 0)
	e, ok := String(body, "/v1/messages", 0)
	// Each literal is at least one token.
	if !ok || e.Input < e0.Input+20_000 {
		t.Errorf("a tool_use input of 20,001 literals (%d bytes): Input = %d (empty input: %d), want >= %d", len(body), e.Input, e0.Input, e0.Input+20_000)
	}
}

// Inside a tool_use input, which the server tokenizes whole, no attachment
// or role rule applies: a "data" string in an object whose "type" was not
// "text" counted as one attachment (1,600 tokens) whatever its length,
// and the values of "type", "role", "media_type" and "detail" counted
// nothing. Every string counts as text there now.
func TestToolInputStringsAreText(t *testing.T) {
	csv := strings.Repeat("2024-01-01,alpha,beta,gamma,delta\n", 6000) // 204 KB
	body := `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"load",` +
		`"input":{"type":"csv","data":"` + strings.ReplaceAll(csv, "\n", `\n`) + `"}}]}]}`
	e, ok := String(body, "/v1/messages", 0)
	if !ok || e.Input < int64(len(csv))/BytesPerToken {
		t.Errorf("a tool_use input with %d bytes of CSV under \"data\": Input = %d, want >= %d", len(csv), e.Input, len(csv)/BytesPerToken)
	}
}

// Anthropic adds a system prompt of its own to a messages request that
// defines tools, counted as input: ToolPromptTokens. The estimate counted
// the definitions' text alone, a seventh of what a request with one small
// tool is charged. Not for an empty "tools", nor for OpenAI's APIs, whose
// definitions are formatted into the prompt the estimate counts; and read
// past the bound too.
func TestAnthropicToolPrompt(t *testing.T) {
	const tool = `{"name":"get_weather","description":"Get the weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}`
	const msgs = `"messages":[{"role":"user","content":"Weather in Paris?"}]`
	input := func(path, tools string) int64 {
		t.Helper()
		e, ok := String(`{"model":"m","max_tokens":1,`+msgs+tools+`}`, path, 0)
		if !ok {
			t.Fatalf("%s %q: not read", path, tools)
		}
		return e.Input
	}
	without := input("/v1/messages", "")
	defs := input("/v1/chat/completions", `,"tools":[`+tool+`]`) - input("/v1/chat/completions", "")
	if got := input("/v1/messages", `,"tools":[`+tool+`]`) - without; got != defs+ToolPromptTokens {
		t.Errorf("Anthropic request with a tool: %d more input tokens, want %d (its definition) + %d", got, defs, ToolPromptTokens)
	}
	if got := input("/v1/messages", `,"tools":[]`); got != without {
		t.Errorf(`"tools":[]: Input %d, want %d`, got, without)
	}
	// Past the bound, where no text counts, the prompt Anthropic adds does.
	pad := strings.Repeat("x", Limit)
	long := `{"model":"m","max_tokens":1,"system":"` + pad + `",` + msgs
	a, okA := String(long+`}`, "/v1/messages", 0)
	b, okB := String(long+`,"tools":[`+tool+`]}`, "/v1/messages", 0)
	if !okA || !okB || b.Input-a.Input != ToolPromptTokens {
		t.Errorf("tools past the bound: Input %d, want %d + %d", b.Input, a.Input, ToolPromptTokens)
	}
}

// A Responses request that carries its conversation itself (store:false,
// or any client appending response.output to the next input) passes back
// the mcp_list_tools item of a remote MCP tool: the tool definitions the
// model is given, input_schema and all, which OpenAI then uses instead of
// listing the server's tools again. They are tool definitions, whose keys
// (and "type" values) the server tokenizes, as it does those of "tools".
// Read as an input item's text, 30 definitions of 12 KB counted 597
// tokens, where the same in "tools" count 2,015.
func TestMCPListToolsCountAsTools(t *testing.T) {
	var defs []string
	for i := range 30 {
		defs = append(defs, fmt.Sprintf(`{"name":"tool_%d","description":"Does thing %d.",`+
			`"input_schema":{"type":"object","properties":{"owner":{"type":"string","description":"Repository owner"},`+
			`"repo":{"type":"string","description":"Repository name"},"per_page":{"type":"number","minimum":1,"maximum":100},`+
			`"state":{"type":"string","enum":["open","closed","all"]}},"required":["owner","repo"],"additionalProperties":false},`+
			`"annotations":null}`, i, i))
	}
	list := `{"type":"mcp_list_tools","id":"mcpl_1","server_label":"github","tools":[` + strings.Join(defs, ",") + `]}`
	const path = "/v1/responses"
	base, _ := String(`{"model":"gpt-5","input":[{"role":"user","content":"hi"}],"max_output_tokens":100}`, path, 0)
	passed, _ := String(`{"model":"gpt-5","input":[{"role":"user","content":"hi"},`+list+`],"max_output_tokens":100}`, path, 0)
	asTools, _ := String(`{"model":"gpt-5","input":[{"role":"user","content":"hi"}],"tools":[`+strings.Join(defs, ",")+`],"max_output_tokens":100}`, path, 0)
	got := passed.Input - base.Input
	want := asTools.Input - base.Input
	if got < want*9/10 {
		t.Errorf("30 MCP tool definitions (%d bytes of JSON) passed back in input count %d tokens; the same definitions in \"tools\" count %d",
			len(list), got, want)
	}
}
