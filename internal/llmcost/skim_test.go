package llmcost

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// The OpenAI SDKs write a request's output bound and n after its
// messages, and one data-URL image pushes them past the bound of what is
// counted. They were not read, and the estimate took the default bound and
// one choice. Past the bound the body is skimmed for them.
func TestSkimOutputBound(t *testing.T) {
	image := `{"type":"image_url","image_url":{"url":"data:image/png;base64,` + strings.Repeat("QUJD", 2000) + `"}}`
	msgs := `{"messages":[{"role":"user","content":[` + image + `,{"type":"text","text":"describe \"this\" \\ \u00e9"}]}],`
	const limit = 4000
	for _, c := range []struct {
		name, path, body string
		max, choices     int64
	}{
		{"chat", "/v1/chat/completions", msgs + `"model":"gpt-4o","max_completion_tokens":32000,"n":4}`, 32000, 4},
		{"chat, max_tokens", "/v1/chat/completions", msgs + `"max_tokens":900}`, 900, 1},
		{"chat, given twice", "/v1/chat/completions", `{"max_tokens":5,` + msgs[1:] + `"max_tokens":900}`, 900, 1},
		{"chat, null past the bound", "/v1/chat/completions", `{"max_tokens":5,` + msgs[1:] + `"max_tokens":null}`, DefaultMaxTokens, 1},
		{"chat, escaped key", "/v1/chat/completions", msgs + `"max\u005ftokens":900}`, 900, 1},
		{"chat, nested keys are not the request's", "/v1/chat/completions", msgs + `"metadata":{"max_tokens":"9","n":9},"stop":["\"}"],"max_tokens":900}`, 900, 1},
		{"completions", "/v1/completions", `{"prompt":"` + strings.Repeat("abcd", 2000) + `","best_of":3,"max_tokens":50}`, 50, 3},
		// A batch of prompts: each past the bound is a completion too,
		// whose output the server reserves (they were left out: 2,000
		// prompts reserved as 1,340 over the default bound), and so is
		// each of a batch whose key comes after it.
		{"completions, batch", "/v1/completions", `{"prompt":["` + strings.Repeat("abcd", 2000) + `","b",[1,2],"c"],"max_tokens":50}`, 50, 4},
		{"completions, batch past the bound", "/v1/completions", `{"model":"m","max_tokens":50,"suffix":"` + strings.Repeat("abcd", 2000) + `","prompt":["a","b","c"]}`, 50, 3},
		{"responses", "/v1/responses", `{"input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,` + strings.Repeat("QUJD", 2000) + `"}]}],"max_output_tokens":700}`, 700, 1},
		{"messages", "/v1/messages", `{"messages":[{"role":"user","content":[{"type":"image","source":{"data":"` + strings.Repeat("QUJD", 2000) + `","media_type":"image/png","type":"base64"}}]}],"model":"claude","max_tokens":20000}`, 20000, 1},
	} {
		short, _ := String(c.body, c.path, limit)
		for _, r := range []io.Reader{strings.NewReader(c.body), iotest.OneByteReader(strings.NewReader(c.body))} {
			e, ok := Read(r, c.path, limit)
			if !ok || !e.Truncated || e.Max != c.max || e.Choices != c.choices {
				t.Errorf("%s: %+v, %v; want Max %d and Choices %d, truncated", c.name, e, ok, c.max, c.choices)
			}
			if e != short {
				t.Errorf("%s: Read %+v, String %+v", c.name, e, short)
			}
		}
	}
}

// Past the bound no text is counted: the prompt is what came before it,
// as without skimming, and the attachments after it (an image here), which
// counted nothing before: ten images of 600 KB in one request were
// estimated as two.
func TestSkimCountsAttachmentsOnly(t *testing.T) {
	const limit = 1000
	body := `{"model":"x","messages":[{"role":"user","content":"` + strings.Repeat("abcd", 1000) + `"},{"role":"user","content":[` +
		`{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"` + strings.Repeat("abcd", 1000) + `"}]}],"tools":[{"name":"abcd"}],"max_tokens":7}`
	e, ok := String(body, "/v1/chat/completions", limit)
	cut, _ := String(body[:limit]+`"}]}`, "/v1/chat/completions", 0)
	if want := cut.Input + AttachmentTokens; !ok || e.Input != want || e.Output != 7 {
		t.Errorf("%+v, %v; want the Input of the first %d bytes and an image, %d, and Output 7", e, ok, limit, want)
	}
}

// A syntax error or a failed read past the bound leaves the estimate as
// it was before them.
func TestSkimFailure(t *testing.T) {
	const limit = 100
	head := `{"model":"x","max_tokens":5,"messages":[{"role":"user","content":"` + strings.Repeat("abcd", 100) + `"}],"n":2,`
	want, _ := String(head+`"x":1}`, "/v1/chat/completions", limit)
	if want.Output != 10 {
		t.Fatalf("Output %d, want 10", want.Output)
	}
	for _, body := range []string{head + `"max_tokens":}`, head + `]`, head + `"max_tokens":9`} {
		if e, ok := String(body, "/v1/chat/completions", limit); !ok || e.Output != want.Output {
			t.Errorf("%q: %+v, %v; want %+v", body[len(head):], e, ok, want)
		}
	}
	r := io.MultiReader(strings.NewReader(head), iotest.ErrReader(errors.New("reset")))
	if e, ok := Read(r, "/v1/chat/completions", limit); !ok || e != want {
		t.Errorf("a read failing past the bound: %+v, %v; want %+v", e, ok, want)
	}
	r = io.MultiReader(strings.NewReader(head), iotest.ErrReader(nil))
	if e, ok := Read(r, "/v1/chat/completions", limit); !ok || e != want {
		t.Errorf("reads returning nothing past the bound: %+v, %v; want %+v", e, ok, want)
	}
}

// A document's source cut by the bound of what is counted is settled by
// the type that follows it, skimmed.
func TestSkimSettlesSource(t *testing.T) {
	const limit = 1000
	text := strings.Repeat("abcd", 1000)
	const head = `{"messages":[{"role":"user","content":[{"type":"document","source":{"data":"`
	for _, c := range []struct {
		typ  string
		want int64
	}{
		{"text", (limit - int64(len(head)) + 3) / 4},
		{"base64", AttachmentTokens},
	} {
		body := head + text + `","media_type":"x","type":"` + c.typ + `"}}]}],"max_tokens":9}`
		e, ok := String(body, "/v1/messages", limit)
		if want := c.want + MessageTokens + RequestTokens; !ok || e.Input != want || e.Output != 9 {
			t.Errorf("type %s: %+v, %v; want Input %d, Output 9", c.typ, e, ok, want)
		}
	}
}

// endless is a body that never ends: a message whose content goes on.
type endless struct{ n int64 }

func (r *endless) Read(p []byte) (int, error) {
	const head = `{"model":"x","max_tokens":5,"messages":[{"role":"user","content":"`
	n := 0
	for ; n < len(p) && r.n < int64(len(head)); n++ {
		p[n] = head[r.n]
		r.n++
	}
	for i := n; i < len(p); i++ {
		p[i] = `a\"`[(r.n+int64(i-n))%3]
	}
	r.n += int64(len(p) - n)
	return len(p), nil
}

// Read asks for no byte past SkimLimit, and takes the body as cut there.
func TestSkimLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MiB")
	}
	r := &endless{}
	e, ok := Read(r, "/v1/chat/completions", 0)
	if !ok || !e.Truncated || e.Output != 5 {
		t.Errorf("%+v, %v; want a truncated estimate with Output 5", e, ok)
	}
	if r.n != SkimLimit {
		t.Errorf("read %d bytes, want %d", r.n, SkimLimit)
	}
}

// BenchmarkReadSkim reads a chat request of a 16 MiB image whose output
// bound follows it: its first MiB counted, the rest skimmed.
func BenchmarkReadSkim(b *testing.B) {
	body := []byte(`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,` +
		strings.Repeat("QUJD", 4<<20) + `"}}]}],"model":"gpt-4o","max_completion_tokens":32000,"n":4}`)
	r := bytes.NewReader(body)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r.Reset(body)
		if e, ok := Read(r, "/v1/chat/completions", 0); !ok || e.Output != 128000 {
			b.Fatal("not estimated")
		}
	}
}

// Images past the bound count 1,600 tokens each, in each API's shape and
// with the members in any order; the text around them does not.
func TestSkimAttachmentShapes(t *testing.T) {
	const limit = 1000
	pad := strings.Repeat("abcd", 300) // past the bound before the images
	for _, c := range []struct{ name, path, head, img, tail string }{
		{"chat", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"` + pad + `"},`,
			`{"type":"image_url","image_url":{"url":"data:image/png;base64,QUJD"}}`, `]}],"max_tokens":5}`},
		{"chat, type last", "/v1/chat/completions", `{"messages":[{"content":[{"text":"` + pad + `","type":"text"},`,
			`{"image_url":{"url":"https://a.test/i.png"},"type":"image_url"}`, `],"role":"user"}],"model":"m"}`},
		{"responses", "/v1/responses", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"` + pad + `"},`,
			`{"type":"input_image","image_url":"data:image/png;base64,QUJD"}`, `]}]}`},
		{"messages", "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"` + pad + `"},`,
			`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUJD"}}`, `]}]}`},
		{"messages, type last", "/v1/messages", `{"max_tokens":5,"messages":[{"content":[{"text":"` + pad + `","type":"text"},`,
			`{"source":{"data":"QUJD","media_type":"image/png","type":"base64"},"type":"image"}`, `],"role":"user"}],"model":"m"}`},
	} {
		one, _ := String(c.head+c.img+c.tail, c.path, limit)
		imgs := strings.TrimSuffix(strings.Repeat(c.img+",", 10), ",")
		ten, ok := String(c.head+imgs+c.tail, c.path, limit)
		if !ok || ten.Input-one.Input != 9*AttachmentTokens {
			t.Errorf("%s: ten images past the bound: Input %d, one: %d; want %d more", c.name, ten.Input, one.Input, 9*AttachmentTokens)
		}
		// A text past the bound counts nothing.
		more, _ := String(c.head+c.img+`,{"type":"text","text":"`+pad+`"}`+c.tail, c.path, limit)
		if more.Input != one.Input {
			t.Errorf("%s: a text past the bound: Input %d, want %d", c.name, more.Input, one.Input)
		}
	}
}
