package polite_test

import (
	"strings"
	"testing"
)

// An image "counts 1,600 tokens whatever its size" (EstimateCost's doc),
// but counted only while it began in the first MiB: past it the body was
// skimmed for the output bound alone. Ten base64 images of 600 KB each (a
// common "compare these photos" request) were estimated as two, 12,800
// tokens under the estimate's own rule, which let the request into a
// quota with room for a fifth of it.
func TestEstimateImagesPastFirstMiB(t *testing.T) {
	for _, tc := range []struct{ path, img, head, tail string }{
		{"/v1/chat/completions",
			`{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,%s"}}`,
			`{"model":"gpt-4o","messages":[{"role":"user","content":[`,
			`,{"type":"text","text":"Which of these photos is sharpest?"}]}],"max_tokens":300}`},
		{"/v1/messages",
			`{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"%s"}}`,
			`{"model":"claude-sonnet-4-5","max_tokens":300,"messages":[{"role":"user","content":[`,
			`,{"type":"text","text":"Which of these photos is sharpest?"}]}]}`},
		{"/v1/responses",
			`{"type":"input_image","image_url":"data:image/jpeg;base64,%s"}`,
			`{"model":"gpt-4.1","input":[{"role":"user","content":[`,
			`,{"type":"input_text","text":"Which of these photos is sharpest?"}]}],"max_output_tokens":300}`},
	} {
		var parts []string
		for range 10 {
			parts = append(parts, strings.Replace(tc.img, "%s", strings.Repeat("QUJD", 150_000), 1))
		}
		body := tc.head + strings.Join(parts, ",") + tc.tail
		c := estimateOf(tc.path, body)
		if c.InputTokens < 10*1600 {
			t.Errorf("%s: 10 images (%d bytes): EstimateCost = %v, want input-tokens >= %d (1,600 an image)", tc.path, len(body), c, 10*1600)
		}
	}
}
