package polite_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/politehttp/polite"
)

// openai-go (the SDK the README pairs polite with) writes a chat request's
// members in its params' order: "messages" first, then "model",
// "max_completion_tokens" and "n". One photo sent as a data URL (a phone's
// JPEG is 1 to 5 MB) pushed them past the 1 MiB EstimateCost read, and the
// request was estimated with the default bound, 4096 tokens, and one
// choice: here 4096 output tokens where the server reserves 32,000 x 4.
// The llmcost doc said what follows the bound was "usually attachments";
// for the OpenAI SDKs it is the output bound and n.
func TestEstimateCostOutputBoundPastLimit(t *testing.T) {
	body := `{"messages":[{"content":[{"image_url":{"url":"data:image/jpeg;base64,` + strings.Repeat("QUJD", 400_000) +
		`"},"type":"image_url"},{"text":"describe","type":"text"}],"role":"user"}],"model":"gpt-4o","max_completion_tokens":32000,"n":4}`
	req, _ := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", strings.NewReader(body))
	if c := polite.EstimateCost(req); c.OutputTokens < 32000*4 {
		t.Errorf("a %d-byte chat request with max_completion_tokens 32000 and n 4 after its image: EstimateCost = %v, want at least %d output tokens",
			len(body), c, 32000*4)
	}
}
