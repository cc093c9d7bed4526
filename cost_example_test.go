package polite_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/politehttp/polite"
)

func ExampleEstimateCost() {
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Write a haiku about rate limits."}],"max_tokens":100}`
	req, err := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(polite.EstimateCost(req))
	// Output: tokens=116 input-tokens=16 output-tokens=100
}

// A Transport.Cost can start from the estimate and add a margin, here a
// quarter more prompt for a tokenizer that splits text finer.
func ExampleEstimateCost_margin() {
	withMargin := func(req *http.Request) polite.Cost {
		c := polite.EstimateCost(req)
		c.InputTokens += c.InputTokens / 4
		c.Tokens = c.InputTokens + c.OutputTokens
		return c
	}
	body := `{"model":"claude-haiku-4-5","max_tokens":512,"system":"Answer in one sentence.","messages":[{"role":"user","content":"What is a token bucket?"}]}`
	req, err := http.NewRequest(http.MethodPost, "https://api.anthropic.com/v1/messages", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(polite.EstimateCost(req))
	fmt.Println(withMargin(req))
	// Output:
	// tokens=531 input-tokens=19 output-tokens=512
	// tokens=535 input-tokens=23 output-tokens=512
}

// A PDF counts as one file, 1,600 tokens, whatever its pages. A caller
// that knows them adds them, here 20 pages at 3,000 tokens, the most
// Anthropic documents for a page of text and its image, and declares the
// cost of the request with WithCost.
func ExampleEstimateCost_pdf() {
	const pages = 20
	body := `{"model":"claude-sonnet-4-5","max_tokens":1000,"messages":[{"role":"user","content":[` +
		`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQK"}},` +
		`{"type":"text","text":"Summarise."}]}]}`
	req, err := http.NewRequest(http.MethodPost, "https://api.anthropic.com/v1/messages", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	c := polite.EstimateCost(req)
	fmt.Println(c)
	c.InputTokens += pages*3000 - 1600
	c.Tokens = c.InputTokens + c.OutputTokens
	req = req.WithContext(polite.WithCost(req.Context(), c))
	_ = req // sent through a polite Transport, it is paced by c
	fmt.Println(c)
	// Output:
	// tokens=2610 input-tokens=1610 output-tokens=1000
	// tokens=61010 input-tokens=60010 output-tokens=1000
}

// A caller that knows better than the estimate declares the cost of one
// request in its context: here a prompt counted by the vendor's tokenizer.
func ExampleWithCost() {
	cost := polite.Cost{InputTokens: 1830, OutputTokens: 400}
	ctx := polite.WithCost(context.Background(), cost)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://api.anthropic.com/v1/messages", strings.NewReader(`{}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = req // sent through a polite Transport, it is paced by cost
	fmt.Println(cost)
	fmt.Println(cost.In("tokens"), cost.In("input-tokens"), cost.In("output-tokens"), cost.In("requests"))
	// Output:
	// tokens=2230 input-tokens=1830 output-tokens=400
	// 2230 1830 400 1
}

// A Cost can name one unit besides tokens, such as the points of a GraphQL
// query's complexity.
func ExampleCost_In() {
	cost := polite.Cost{Unit: "points", Amount: 50}
	fmt.Println(cost.In("points"), cost.In("requests"), cost.In("tokens"))
	// Output: 50 1 0
}
