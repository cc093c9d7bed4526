package main

import (
	"flag"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

var realMiddlewares = flag.Bool("middleware", false,
	"run polite and the plain client against each middleware in real time: 100 tasks, 16 workers, quota 20 per 2s (about 80 s)")

// clientNamed returns the client of the table called name.
func clientNamed(t *testing.T, name string) client {
	t.Helper()
	for _, c := range clients {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no client %q", name)
	return client{}
}

// TestMiddlewareHeaders checks what each middleware sends, as its about
// line says: a quota of 1 per minute, so the second request is refused at
// once and nothing waits.
func TestMiddlewareHeaders(t *testing.T) {
	fields := []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}
	for _, m := range middlewares {
		t.Run(m.name, func(t *testing.T) {
			srv := newMiddlewareServer(m, 1, time.Minute, 0)
			defer srv.Close()
			c := srv.Client()
			var resps []*http.Response
			for range 2 {
				resp, err := c.Get(srv.URL + "/items/1")
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				resps = append(resps, resp)
			}
			now := time.Now()
			if got := resps[0].StatusCode; got != http.StatusOK {
				t.Fatalf("first response: status %d, want 200", got)
			}
			refusal := resps[1]
			if refusal.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("second response: status %d, want 429", refusal.StatusCode)
			}
			if req, ref := srv.stats(); req != 2 || ref != 1 {
				t.Errorf("stats() = %d requests, %d refused; want 2, 1", req, ref)
			}
			h := refusal.Header
			if m.name == "httprate-noheaders" {
				for _, f := range append(fields, "Retry-After") {
					if v := h.Get(f); v != "" {
						t.Errorf("refusal has %s: %q, want none", f, v)
					}
				}
				return
			}
			for _, f := range fields {
				if h.Get(f) == "" {
					t.Errorf("refusal has no %s; header %v", f, h)
				}
			}
			if got := h.Get("X-RateLimit-Remaining"); got != "0" {
				t.Errorf("refusal: X-RateLimit-Remaining %q, want 0", got)
			}
			// The reset is an epoch in whole seconds, rounded down, of the
			// end of the window that began with the first request (ulule)
			// or with the limiter (httprate): within the next minute.
			reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
			if err != nil {
				t.Fatalf("X-RateLimit-Reset %q: %v", h.Get("X-RateLimit-Reset"), err)
			}
			if lo, hi := now.Unix()+58, now.Unix()+60; reset < lo || reset > hi {
				t.Errorf("X-RateLimit-Reset = %d, want an epoch in [%d, %d]", reset, lo, hi)
			}
			wantRetryAfter := ""
			if strings.HasPrefix(m.name, "httprate") {
				wantRetryAfter = "60" // the window, whatever is left of it
			}
			if got := h.Get("Retry-After"); got != wantRetryAfter {
				t.Errorf("refusal: Retry-After %q, want %q", got, wantRetryAfter)
			}
		})
	}
}

// TestMiddlewareSmoke runs polite and the plain client through each
// middleware with fewer tasks than the quota: no wait, no refusal. It
// checks the harness end to end in a few milliseconds; the real-time
// measurement is TestMiddlewares.
func TestMiddlewareSmoke(t *testing.T) {
	for _, m := range middlewares {
		for _, name := range []string{"polite", "plain"} {
			t.Run(m.name+"/"+name, func(t *testing.T) {
				r := middlewareRun{m: m, client: clientNamed(t, name), quota: 20, window: 2 * time.Second,
					tasks: 10, workers: 4, timeout: 5 * time.Second, phase: -1}.do()
				if r.ok != r.tasks || r.refused != 0 || r.requests != r.tasks || r.errs != 0 || r.timedOut {
					t.Errorf("%d tasks under the quota: ok %d, refused %d, requests %d, errors %d (first %v), timed out %v; want all ok, no refusal, one request each",
						r.tasks, r.ok, r.refused, r.requests, r.errs, r.firstErr, r.timedOut)
				}
			})
		}
	}
}

// TestMiddlewares measures polite and the plain client against each
// middleware in real time, as the command's -middleware does once: it is
// skipped unless -middleware is given. It logs each row and fails only if
// a run hits its timeout (a hang); how fast and how politely each client
// did is for the reader of the log.
//
//	go test -run 'TestMiddlewares$' -middleware -count 3 -v
func TestMiddlewares(t *testing.T) {
	if !*realMiddlewares {
		t.Skip("real time, about 80 s: run with -middleware")
	}
	const (
		tasks, workers, quota = 100, 16, 20
		window, latency       = 2 * time.Second, 10 * time.Millisecond
	)
	for _, m := range middlewares {
		ideal := m.ideal(quota, window, latency, tasks, workers)
		for _, name := range []string{"polite", "plain"} {
			t.Run(m.name+"/"+name, func(t *testing.T) {
				r := middlewareRun{m: m, client: clientNamed(t, name), quota: quota, window: window, latency: latency,
					tasks: tasks, workers: workers, timeout: time.Minute, phase: -1}.do()
				var b strings.Builder
				printRow(&b, r, ideal)
				t.Logf("ideal %v\n%s", round(ideal), b.String())
				if r.timedOut {
					t.Errorf("run timed out after a minute: %d of %d tasks ok", r.ok, r.tasks)
				}
			})
		}
	}
}
