package llmcost

import (
	"strings"
	"testing"
	"testing/iotest"
)

// An Anthropic document whose source is plain text holds the text itself
// under "data", and is counted as the text it is, whatever the order of
// the source's members; any other source's data (base64, an image's or a
// PDF's) is still an attachment. The scanner took every string under
// "data" for an attachment.
func TestTextSourceData(t *testing.T) {
	text := strings.Repeat("abcd", 10_000) // 10,000 tokens
	const head = `{"model":"claude","max_tokens":10,"messages":[{"role":"user","content":[{"type":"document","source":`
	const tail = `}]}]}`
	asText := MessageTokens + RequestTokens + int64(len(text))/BytesPerToken
	asFile := MessageTokens + RequestTokens + int64(AttachmentTokens)
	for _, c := range []struct {
		name, source string
		want         int64
	}{
		{"type first", `{"type":"text","media_type":"text/plain","data":"` + text + `"}`, asText},
		{"type last", `{"data":"` + text + `","media_type":"text/plain","type":"text"}`, asText},
		{"type escaped", `{"data":"` + text + `","t\u0079pe":"\u0074ext"}`, asText},
		{"type given twice, text last", `{"type":"base64","data":"` + text + `","type":"text"}`, asText},
		{"type given twice, base64 last", `{"type":"text","data":"` + text + `","type":"base64"}`, asFile},
		{"base64", `{"data":"` + text + `","media_type":"application/pdf","type":"base64"}`, asFile},
		{"base64 first", `{"type":"base64","media_type":"image/png","data":"` + text + `"}`, asFile},
		{"no type", `{"data":"` + text + `"}`, asFile},
		{"type of a nested object", `{"data":"` + text + `","cache_control":{"type":"text"},"type":"base64"}`, asFile},
		{"nested text", `{"data":"abcd","x":{"type":"text","data":"` + text + `"},"type":"base64"}`, asText + AttachmentTokens},
		// x is no attachment's object, and its type is not known at its
		// data: text, as the data of an object with no type (an
		// attachment before, as any data whose type was not yet "text").
		{"nested, type after", `{"data":"` + text + `","x":{"data":"abcd","type":"text"},"type":"text"}`, asText + 1},
		{"url", `{"type":"text","url":"https://example.com/a.txt"}`, asFile},
	} {
		body := head + c.source + tail
		e, ok := String(body, "/v1/messages", 0)
		if !ok || e.Input != c.want {
			t.Errorf("%s: Input %d, %v; want %d", c.name, e.Input, ok, c.want)
		}
		// Read a byte at a time, the same.
		if r, _ := Read(iotest.OneByteReader(strings.NewReader(body)), "/v1/messages", 0); r != e {
			t.Errorf("%s: %+v read a byte at a time, %+v at once", c.name, r, e)
		}
	}
}

// A source cut at the bound counts as text only when its type came
// first and said so; otherwise as an attachment, as before its type was
// read.
func TestTextSourceCut(t *testing.T) {
	text := strings.Repeat("abcd", 10_000)
	const head = `{"model":"claude","max_tokens":10,"messages":[{"role":"user","content":[{"type":"document","source":`
	for _, c := range []struct {
		name, source string
		limit        int64
		want         int64
	}{
		{"type unknown", `{"data":"` + text, 30_000, AttachmentTokens},
		{"base64, long", `{"type":"base64","data":"` + text, 30_000, AttachmentTokens},
		{"text, short", `{"type":"text","data":"` + text, 200, (200 - 123 + 3) / 4},
	} {
		body := head + c.source + `"}}]}]}`
		e, ok := String(body, "/v1/messages", c.limit)
		if want := c.want + MessageTokens + RequestTokens; !ok || e.Input != want {
			t.Errorf("%s: Input %d, %v; want %d", c.name, e.Input, ok, want)
		}
	}
}

// A Responses request passing back an image_generation_call holds its
// image in "result", base64: counted as text, one image of 960 KB was
// estimated at 250,030 tokens, past most quotas (a CostError, or a wait
// for a whole window). It counts as an attachment, as an image's "data"
// does; a "result" in a tool call's input is text still.
func TestImageGenerationResult(t *testing.T) {
	img := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 40000)
	call := func(result string) string {
		return `{"model":"m","input":[{"role":"user","content":"draw a cat"},{"type":"image_generation_call","id":"ig_1","status":"completed","result":"` +
			result + `"},{"role":"user","content":"make it blue"}]}`
	}
	big, okB := String(call(img), "/v1/responses", 0)
	small, okS := String(call("x"), "/v1/responses", 0)
	if !okB || !okS || big.Input != small.Input || big.Input < AttachmentTokens || big.Input > AttachmentTokens+100 {
		t.Errorf("image_generation_call result: Input %d (a 1-byte result: %d), want an attachment's %d and the text around it", big.Input, small.Input, AttachmentTokens)
	}
	tool := `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{"result":"` + strings.Repeat("word ", 400) + `"}}]}]}`
	if e, ok := String(tool, "/v1/messages", 0); !ok || e.Input < 400 {
		t.Errorf(`"result" in a tool call's input: Input %d, want its 2,000 bytes as text (500 tokens)`, e.Input)
	}
}
