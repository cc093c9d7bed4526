package polite_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/politehttp/polite"
)

// estimateOf returns EstimateCost of a POST of body to path on loopback.
func estimateOf(path, body string) polite.Cost {
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1"+path, strings.NewReader(body))
	return polite.EstimateCost(req)
}

// A "url", or a "data" in an object with no "type", counted as an
// attachment (1,600 tokens) at any depth of the prompt, not only in an
// image's or a file's object: an Anthropic tool_use of a fetch tool
// ({"url": ...}), a citation (web_search_result_location has "url"), and a
// Responses url_citation annotation passed back as input each counted
// 1,600 tokens. An agent's turn that fetched 20 pages was estimated at
// 32,591 tokens for a body of 5.5 KB, which a quota of 30,000 input tokens
// (Anthropic's tier 1) failed with a CostError once the limit was known.
// The attachments of the same APIs still count so.
func TestEstimateURLOutsideAttachment(t *testing.T) {
	var msgs []string
	for range 20 {
		msgs = append(msgs,
			`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"fetch","input":{"url":"https://example.com/page"}}]}`,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"Example Domain. This domain is for use in examples."}]}`)
	}
	agent := `{"model":"claude-sonnet-4-5","max_tokens":1024,"tools":[{"name":"fetch","description":"Fetch a URL","input_schema":{"type":"object","properties":{"url":{"type":"string"}}}}],` +
		`"messages":[{"role":"user","content":"Read these pages"},` + strings.Join(msgs, ",") + `]}`

	cite := `{"type":"web_search_result_location","url":"https://example.com/a","title":"A","cited_text":"abc","encrypted_index":"Eo8BCioIAhgBIiQ"}`
	anthCites := `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"What happened?"},` +
		`{"role":"assistant","content":[{"type":"text","text":"Several things.","citations":[` + strings.TrimSuffix(strings.Repeat(cite+",", 10), ",") + `]}]},` +
		`{"role":"user","content":"Tell me more."}]}`

	ann := `{"type":"url_citation","url":"https://example.com/a","title":"A","start_index":0,"end_index":15}`
	respCites := `{"model":"gpt-4.1","max_output_tokens":1024,"input":[{"role":"user","content":"What happened?"},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Several things.","annotations":[` + strings.TrimSuffix(strings.Repeat(ann+",", 10), ",") + `]}]},` +
		`{"role":"user","content":"Tell me more."}]}`

	for _, tc := range []struct {
		name, path, body string
		most             int64 // a generous bound: the body's bytes over 2
	}{
		{"tool_use url", "/v1/messages", agent, int64(len(agent)) / 2},
		{"anthropic citations", "/v1/messages", anthCites, int64(len(anthCites)) / 2},
		{"responses url_citation", "/v1/responses", respCites, int64(len(respCites)) / 2},
	} {
		if c := estimateOf(tc.path, tc.body); c.InputTokens > tc.most {
			t.Errorf("%s: a %d-byte body with no image or file: EstimateCost = %v, want input-tokens <= %d", tc.name, len(tc.body), c, tc.most)
		}
	}
}

func TestEstimateAttachmentsStillCount(t *testing.T) {
	const img = "QUJDRA=="
	for _, tc := range []struct{ name, path, body string }{
		{"chat image_url object", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + img + `"}}]}]}`},
		{"chat image_url, type last", "/v1/chat/completions", `{"messages":[{"content":[{"image_url":{"url":"https://a.test/i.png"},"type":"image_url"}],"role":"user"}],"model":"m"}`},
		{"chat input_audio", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"` + img + `","format":"wav"}}]}]}`},
		{"chat file", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]}`},
		{"responses input_image", "/v1/responses", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://a.test/i.png"}]}]}`},
		{"responses input_file", "/v1/responses", `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_url":"https://a.test/f.pdf"}]}]}`},
		{"anthropic base64 image", "/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + img + `"}}]}]}`},
		{"anthropic source, type last", "/v1/messages", `{"max_tokens":10,"messages":[{"content":[{"source":{"data":"` + img + `","media_type":"image/png","type":"base64"},"type":"image"}],"role":"user"}],"model":"m"}`},
		{"anthropic url image", "/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://a.test/i.png"}}]}]}`},
		{"vllm video_url", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"video_url","video_url":{"url":"https://a.test/v.mp4"}}]}]}`},
		{"vllm audio_url", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"audio_url","audio_url":{"url":"data:audio/wav;base64,` + img + `"}}]}]}`},
		{"input_audio as a string", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":"` + img + `"}]}]}`},
		{"anthropic file document", "/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_1"}}]}]}`},
	} {
		if c := estimateOf(tc.path, tc.body); c.InputTokens < 1600 {
			t.Errorf("%s: EstimateCost = %v, want input-tokens >= 1600 (one attachment)", tc.name, c)
		}
	}
}
