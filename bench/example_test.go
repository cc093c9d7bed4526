package main

import (
	"net/http"
	"time"

	"github.com/go-resty/resty/v2"
	"github.com/politehttp/polite"
)

// polite under resty: resty keeps its API, polite paces and retries. Turn
// resty's own retries off (or leave them for network errors only): polite
// already waits out 429 and 503 as the server asks. Compile-only: it would
// call a real API.
func Example_resty() {
	client := resty.New().
		SetTransport(&polite.Transport{Base: http.DefaultTransport, MaxWait: time.Minute}).
		SetRetryCount(0)
	resp, err := client.R().Get("https://api.example/items/1")
	_, _ = resp, err
}

// polite under any library that takes an *http.Client (colly's
// SetClient, go-github's NewClient, the OpenAI and Anthropic SDKs'
// option.WithHTTPClient...): wrap the client, hand it over. Compile-only.
func Example_client() {
	client := polite.Wrap(&http.Client{Timeout: 30 * time.Second})
	useClient(client)
}

func useClient(*http.Client) {}
