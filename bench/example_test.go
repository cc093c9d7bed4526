package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-resty/resty/v2"
	"github.com/hashicorp/go-retryablehttp"
	"github.com/politehttp/polite"
)

// Stacking polite with a retrying client that a program keeps
//
// polite goes inside, as the transport; the outer client keeps its API.
// There must be one retry loop per failure, not two:
//
//   - Refusals (429, 503) are polite's: it waits as long as the server asks,
//     paces every request to the origin by the same pause, keeps retries
//     within the origin's retry budget, and hands the last refusal back
//     unaltered. An outer loop that retried it again would multiply the
//     attempts (MaxAttempts × its own retries), wait by its own backoff
//     rather than by what the server said, and hammer an origin that polite
//     had paused.
//   - A *polite.WaitError means the server asked for a longer wait than
//     MaxWait allows: retrying it at once only gets the same error.
//     Reschedule after its Until instead.
//   - Connection errors on idempotent requests are the outer client's,
//     unless polite's Transport.RetryTransient is set: then polite retries
//     them (and 502 and 504) within the same budget, and the outer client
//     should retry nothing at all. Without it, keep the outer retries few
//     and short.
//
// The examples run against a server that drops the first connection,
// refuses the next request once with "Retry-After: 0", then answers. The
// refusal costs each example a second of real time: polite resends no
// refusal within a second, whatever the server says (DESIGN.md §5, "the
// refusal floor").

// flakyServer drops the connection of the first request, refuses the
// second, and answers the others; n counts the requests it got.
func flakyServer(n *atomic.Int64) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close() // no response: the client sees a transport error
			}
		case 2:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			fmt.Fprint(w, "ok")
		}
	}))
}

// idempotent reports whether a request with this method may be sent twice
// without a second effect (RFC 9110 §9.2.2).
func idempotent(method string) bool {
	switch method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// polite under go-retryablehttp. retryablehttp's default policy retries 429
// and every 5xx with its own backoff: replace it with one that retries
// transport errors only, and not a *polite.WaitError.
func Example_retryablehttp() {
	var n atomic.Int64
	srv := flakyServer(&n)
	defer srv.Close()

	client := retryablehttp.NewClient()
	client.HTTPClient.Transport = &polite.Transport{MaxWait: time.Minute}
	client.Logger = nil
	client.RetryMax = 2                         // connection errors only
	client.RetryWaitMin = 10 * time.Millisecond // short, for the example
	client.RetryWaitMax = 100 * time.Millisecond
	client.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if err == nil {
			return false, nil // a response, refusals included, is final: polite retried it
		}
		if werr := (*polite.WaitError)(nil); errors.As(err, &werr) {
			return false, nil // reschedule after werr.Until instead
		}
		return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	}
	// retryablehttp retries every method, as it buffers the request's
	// body, and CheckRetry sees no request on a transport error: keep
	// retries to the methods that may be sent twice here, before each.
	client.PrepareRetry = func(req *http.Request) error {
		if !idempotent(req.Method) {
			return fmt.Errorf("%s not retried: it may not be sent twice", req.Method)
		}
		return nil
	}

	resp, err := client.Get(srv.URL + "/items/1")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, "after", n.Load(), "requests: retryablehttp retried the dropped connection, polite the 429")

	n.Store(0) // the server drops the next connection again
	if _, err = client.Post(srv.URL+"/items", "text/plain", strings.NewReader("new")); err != nil {
		fmt.Println("POST:", n.Load(), "request; its dropped connection not retried")
	}
	// Output:
	// 200 after 3 requests: retryablehttp retried the dropped connection, polite the 429
	// POST: 1 request; its dropped connection not retried
}

// polite under resty. resty v2 retries every error, whatever the method,
// and no response unless a condition says so: a condition that retries
// idempotent requests on transport errors, and not a *polite.WaitError,
// leaves refusals to polite.
func Example_resty() {
	var n atomic.Int64
	srv := flakyServer(&n)
	defer srv.Close()

	client := resty.New().
		SetLogger(quiet{}).
		SetTransport(&polite.Transport{MaxWait: time.Minute}).
		SetRetryCount(2). // connection errors only
		SetRetryWaitTime(10 * time.Millisecond).
		SetRetryMaxWaitTime(100 * time.Millisecond).
		AddRetryCondition(func(r *resty.Response, err error) bool {
			if err == nil || r == nil || r.Request == nil {
				return false // a response, refusals included, is final: polite retried it
			}
			if werr := (*polite.WaitError)(nil); errors.As(err, &werr) {
				return false // reschedule after werr.Until instead
			}
			return idempotent(r.Request.Method)
		})

	resp, err := client.R().Get(srv.URL + "/items/1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.StatusCode(), "after", n.Load(), "requests: resty retried the dropped connection, polite the 429")
	// Output:
	// 200 after 3 requests: resty retried the dropped connection, polite the 429
}

// polite under any library that takes an *http.Client (colly's
// SetClient, go-github's NewClient, the OpenAI and Anthropic SDKs'
// option.WithHTTPClient...): wrap the client, hand it over. Compile-only.
func Example_client() {
	client := polite.Wrap(&http.Client{Timeout: 30 * time.Second})
	useClient(client)
}

func useClient(*http.Client) {}

// quiet is a resty.Logger that says nothing, to keep the example's output
// to what it prints.
type quiet struct{}

func (quiet) Errorf(string, ...any) {}
func (quiet) Warnf(string, ...any)  {}
func (quiet) Debugf(string, ...any) {}
