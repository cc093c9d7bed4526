package polite_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/politehttp/polite"
)

// An Anthropic document block whose source is plain text carries the text
// itself under "data" ({"type":"text","media_type":"text/plain","data":
// "..."}), and Anthropic counts it as the text it is. EstimateCost took
// every string under "data" for an image or a file and counted it 1,600
// tokens whatever its length: a 225,000-byte text (about 57,000 tokens as
// a text block) was estimated at 1,610, a 35-fold under-count that the
// quota's refusals paid for.
func TestEstimateCostPlainTextDocument(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 5000)
	asDoc := `{"max_tokens":1000,"messages":[{"content":[{"source":{"data":"` + text +
		`","media_type":"text/plain","type":"text"},"type":"document"}],"role":"user"}],"model":"claude-haiku-4-5"}`
	asText := `{"max_tokens":1000,"messages":[{"content":[{"text":"` + text +
		`","type":"text"}],"role":"user"}],"model":"claude-haiku-4-5"}`
	est := func(body string) polite.Cost {
		req, _ := http.NewRequest(http.MethodPost, "https://api.anthropic.com/v1/messages", strings.NewReader(body))
		return polite.EstimateCost(req)
	}
	doc, inline := est(asDoc), est(asText)
	if doc.InputTokens < inline.InputTokens*9/10 {
		t.Errorf("plain-text document of %d bytes: EstimateCost = %v, want about the %d input tokens of the same text in a text block (%v)",
			len(text), doc, inline.InputTokens, inline)
	}
}
