package llm_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/politehttp/polite"
)

// recorder is an in-memory Base: it records the body each request
// carried and answers a small JSON document.
type recorder struct {
	bodies []string
	answer string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var b []byte
	if req.Body != nil {
		b, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	r.bodies = append(r.bodies, string(b))
	return &http.Response{
		StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(strings.NewReader(r.answer)),
		Request: req,
	}, nil
}

// The SDKs of OpenAI and Anthropic give a *bytes.Reader body
// (option.WithRequestBody, and Anthropic's SigV4 middleware every body) a
// GetBody that seeks the same reader back to 0 and returns it: Body and
// GetBody share one reader. The default estimate read it to its end
// through GetBody before the first attempt, which went out with an empty
// body (through net/http: "http: ContentLength=N with Body length 0").
func TestSDKBodyReaderOpenAI(t *testing.T) {
	const body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Write a haiku about rate limits."}],"max_completion_tokens":100}`
	rec := &recorder{answer: `{"id":"x","object":"chat.completion","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}`}
	client := openai.NewClient(
		option.WithBaseURL("https://api.openai.example/v1"),
		option.WithAPIKey("sk-test"),
		option.WithHTTPClient(polite.NewClient(&polite.Transport{Base: rec})),
		option.WithMaxRetries(0),
	)
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{},
		option.WithRequestBody("application/json", bytes.NewReader([]byte(body))))
	if err != nil {
		t.Logf("SDK error: %v", err)
	}
	if len(rec.bodies) != 1 || rec.bodies[0] != body {
		t.Fatalf("server received bodies %q, want one of %d bytes: %q", rec.bodies, len(body), body)
	}
}

// The same through Anthropic's SDK.
func TestSDKBodyReaderAnthropic(t *testing.T) {
	const body = `{"model":"claude-haiku-4-5","max_tokens":100,"messages":[{"role":"user","content":"Write a haiku about rate limits."}]}`
	rec := &recorder{answer: `{"id":"x","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}`}
	client := anthropic.NewClient(
		anthropicoption.WithBaseURL("https://api.anthropic.example"),
		anthropicoption.WithAPIKey("sk-ant-test"),
		anthropicoption.WithHTTPClient(polite.NewClient(&polite.Transport{Base: rec})),
		anthropicoption.WithMaxRetries(0),
	)
	_, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{},
		anthropicoption.WithRequestBody("application/json", bytes.NewReader([]byte(body))))
	if err != nil {
		t.Logf("SDK error: %v", err)
	}
	if len(rec.bodies) != 1 || rec.bodies[0] != body {
		t.Fatalf("server received bodies %q, want one of %d bytes: %q", rec.bodies, len(body), body)
	}
}
