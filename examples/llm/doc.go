// Package llm shows polite under the official Go SDKs of OpenAI and
// Anthropic: each SDK gets a polite client through option.WithHTTPClient,
// with its own retries turned off, so that polite alone paces the requests
// by the quotas the API states and retries the refusals. The tests run the
// SDKs against the OpenAI- and Anthropic-shaped token servers of
// ratelimittest.
package llm
