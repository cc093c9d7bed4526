package main

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/go-resty/resty/v2"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/politehttp/polite"
)

// getFunc performs one task: a GET of url, retried as the client retries,
// with its response body read to the end and closed. It returns the status
// of the final response, or an error when the client returned no response.
type getFunc func(ctx context.Context, url string) (status int, err error)

// A client is one way of sending requests with retries, configured as its
// documentation shows and its users typically write it.
type client struct {
	name  string
	about string // how it is configured, for the README and -h

	// new returns the client's getFunc for one run, sending through base.
	// base stands for http.DefaultTransport: it is a fresh clone of it for
	// each run, wrapped to record when each task first reaches the wire.
	new func(base http.RoundTripper) getFunc
}

const (
	// plainAttempts is how many times the hand-written loop sends one
	// request at most, counting the first.
	plainAttempts = 10
	// maxRetries is the retry count given to resty and failsafe, whose
	// knobs count retries: 11 sends at most.
	maxRetries = 10
)

var clients = []client{
	{
		name:  "polite",
		about: "polite.Wrap(&http.Client{}), no configuration",
		new: func(base http.RoundTripper) getFunc {
			c := polite.Wrap(&http.Client{Transport: base})
			return func(ctx context.Context, url string) (int, error) {
				return get(ctx, c, url)
			}
		},
	},
	{
		name:  "plain",
		about: "http.Client with a hand-written loop: on 429/503 sleep Retry-After seconds, else 1s; 10 attempts",
		new: func(base http.RoundTripper) getFunc {
			c := &http.Client{Transport: base}
			return func(ctx context.Context, url string) (int, error) {
				return plainGet(ctx, c, url)
			}
		},
	},
	{
		name:  "retryablehttp",
		about: "retryablehttp.NewClient() defaults (4 retries, 1s–30s backoff, honours Retry-After), logger off",
		new: func(base http.RoundTripper) getFunc {
			c := retryablehttp.NewClient()
			c.Logger = nil
			c.HTTPClient.Transport = base
			return func(ctx context.Context, url string) (int, error) {
				req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if err != nil {
					return 0, err
				}
				resp, err := c.Do(req)
				return drain(resp, err)
			}
		},
	},
	{
		name:  "resty",
		about: "resty v2: SetRetryCount(10), retry condition on 429/503, SetRetryAfter reading Retry-After seconds, default waits (100ms–2s)",
		new: func(base http.RoundTripper) getFunc {
			c := resty.New().
				SetTransport(base).
				SetRetryCount(maxRetries).
				AddRetryCondition(func(r *resty.Response, err error) bool {
					return r.StatusCode() == http.StatusTooManyRequests ||
						r.StatusCode() == http.StatusServiceUnavailable
				}).
				// resty reads no Retry-After of its own: this callback is
				// how its documentation says to honour it. Zero falls back
				// to resty's jittered backoff; resty caps the result at
				// RetryMaxWaitTime (2s by default).
				SetRetryAfter(func(_ *resty.Client, r *resty.Response) (time.Duration, error) {
					if s, err := strconv.Atoi(r.Header().Get("Retry-After")); err == nil && s > 0 {
						return time.Duration(s) * time.Second, nil
					}
					return 0, nil
				})
			return func(ctx context.Context, url string) (int, error) {
				resp, err := c.R().SetContext(ctx).Get(url)
				if err != nil {
					return 0, err
				}
				return resp.StatusCode(), nil // resty has read and closed the body
			}
		},
	},
	{
		name:  "failsafe",
		about: "failsafehttp.NewRoundTripper with NewRetryPolicyBuilder().WithBackoff(1s, 30s).WithMaxRetries(10), as documented; delay from Retry-After when present",
		new: func(base http.RoundTripper) getFunc {
			policy := failsafehttp.NewRetryPolicyBuilder().
				WithBackoff(time.Second, 30*time.Second).
				WithMaxRetries(maxRetries).
				Build()
			c := &http.Client{Transport: failsafehttp.NewRoundTripper(base, policy)}
			return func(ctx context.Context, url string) (int, error) {
				return get(ctx, c, url)
			}
		},
	},
}

// get sends one GET with c and drains the response.
func get(ctx context.Context, c *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	return drain(c.Do(req))
}

// drain reads resp's body to the end, closes it and returns its status.
func drain(resp *http.Response, err error) (int, error) {
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}

// plainGet is the retry loop people write by hand: on 429 or 503, sleep for
// Retry-After when it is a number of seconds, else for one second, and try
// again, up to plainAttempts sends in all.
func plainGet(ctx context.Context, c *http.Client, url string) (int, error) {
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		refused := resp.StatusCode == http.StatusTooManyRequests ||
			resp.StatusCode == http.StatusServiceUnavailable
		if !refused || attempt == plainAttempts {
			return resp.StatusCode, nil
		}
		wait := time.Second
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			wait = time.Duration(s) * time.Second
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		}
	}
}
