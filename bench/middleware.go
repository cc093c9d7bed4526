package main

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/go-chi/httprate"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	"github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/politehttp/polite/ratelimittest"
)

// A middleware is a rate-limiting middleware of the Go ecosystem, run in
// front of a handler that serves every request it lets through, configured
// as its documentation shows for one quota per window.
type middleware struct {
	name  string
	about string // what it is and what it sends, for the table heading and -h

	// algorithm is the counting rule of ratelimittest that the middleware
	// enforces, so that ratelimittest.Ideal can compute the time a perfect
	// client needs against it.
	algorithm ratelimittest.Algorithm

	// wrap returns next behind a fresh limiter admitting quota requests
	// per window.
	wrap func(quota int, window time.Duration, next http.Handler) http.Handler
}

var middlewares = []middleware{
	{
		name: "ulule",
		about: "ulule/limiter v3, stdlib middleware, memory store: fixed window from the first request; " +
			"X-RateLimit-Limit, -Remaining, -Reset (epoch seconds, rounded down) on every response; refusals without Retry-After",
		algorithm: ratelimittest.FixedWindow,
		wrap: func(quota int, window time.Duration, next http.Handler) http.Handler {
			// The memory store of limiter.NewStore runs a goroutine that
			// purges expired keys every 30 s until the store is collected;
			// with no clean-up interval it runs none. Counting is the same.
			store := memory.NewStoreWithOptions(limiter.StoreOptions{Prefix: limiter.DefaultPrefix})
			l := limiter.New(store, limiter.Rate{Period: window, Limit: int64(quota)})
			return stdlib.NewMiddleware(l).Handler(next)
		},
	},
	{
		name: "httprate",
		about: "go-chi/httprate, LimitBy with one key: sliding-window counter; " +
			"X-RateLimit-Limit, -Remaining, -Reset (epoch seconds of the current window's end) on every response; refusals with Retry-After = the window",
		algorithm: ratelimittest.SlidingWindowRounded,
		wrap: func(quota int, window time.Duration, next http.Handler) http.Handler {
			return httprate.LimitBy(quota, window, httprate.Key("*"))(next)
		},
	},
	{
		name:      "httprate-noheaders",
		about:     "go-chi/httprate as above with WithResponseHeaders(ResponseHeaders{}): no rate-limit field at all, a bare 429",
		algorithm: ratelimittest.SlidingWindowRounded,
		wrap: func(quota int, window time.Duration, next http.Handler) http.Handler {
			return httprate.LimitBy(quota, window, httprate.Key("*"),
				httprate.WithResponseHeaders(httprate.ResponseHeaders{}))(next)
		},
	},
}

// ideal returns the time a perfect client needs to complete tasks requests
// with workers workers against m at quota per window, each admitted request
// taking latency: ratelimittest.Ideal for the counting rule m enforces,
// computed from the quota, not measured.
func (m middleware) ideal(quota int, window, latency time.Duration, tasks, workers int) time.Duration {
	cfg := ratelimittest.Config{
		Policies: []ratelimittest.Policy{{
			Name:      "api",
			Algorithm: m.algorithm,
			Quota:     int64(quota),
			Window:    window,
		}},
		Latency: latency,
	}
	return ratelimittest.Ideal(cfg, tasks, workers)
}

// A middlewareServer is a loopback server of m in front of a handler that
// answers 200 "ok" after latency, counting the requests it received and
// the refusals (429) it sent.
type middlewareServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests int
	refused  int
}

// newMiddlewareServer starts a server on 127.0.0.1 (httptest's default)
// with a fresh limiter of m. The caller must Close it.
func newMiddlewareServer(m middleware, quota int, window, latency time.Duration) *middlewareServer {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if latency > 0 {
			t := time.NewTimer(latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		w.Write([]byte("ok"))
	})
	s := new(middlewareServer)
	limited := m.wrap(quota, window, app)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		limited.ServeHTTP(sw, r)
		s.mu.Lock()
		s.requests++
		if sw.status == http.StatusTooManyRequests {
			s.refused++
		}
		s.mu.Unlock()
	}))
	return s
}

// stats returns the requests received and the refusals sent so far.
func (s *middlewareServer) stats() (requests, refused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.refused
}

// statusWriter records the status a handler writes.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// A middlewareRun is one client given tasks GETs to do with workers
// goroutines against a fresh server of m admitting quota per window, each
// admitted request taking latency, within timeout.
type middlewareRun struct {
	m       middleware
	client  client
	quota   int
	window  time.Duration
	latency time.Duration
	tasks   int
	workers int
	timeout time.Duration

	// phase, if not negative, is where in a second of the wall clock the
	// server starts, and with it the run: both middlewares round their
	// resets down to the second, httprate aligns its windows to the
	// instant its limiter is made and ulule its first window to the first
	// request, so how early a stated reset is depends on it.
	phase time.Duration
}

func (r middlewareRun) do() result {
	if r.phase >= 0 {
		now := time.Now()
		time.Sleep(now.Truncate(time.Second).Add(time.Second + r.phase%time.Second).Sub(now))
	}
	srv := newMiddlewareServer(r.m, r.quota, r.window, r.latency)
	defer srv.Close()
	res := drive(r.client, srv.URL, r.tasks, r.workers, r.timeout)
	res.requests, res.refused = srv.stats()
	return res
}
