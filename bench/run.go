package main

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// A result is what one client achieved against one fresh server.
type result struct {
	client   string
	tasks    int           // tasks given
	ok       int           // tasks whose final response was 200
	errs     int           // tasks that ended with an error and no response
	refused  int           // refusals the server counted (Stats.Refused)
	requests int           // requests the server received
	wall     time.Duration // from the start of the run to the end of its last task
	longest  time.Duration // longest task, from its first send to its final response
	timedOut bool          // the run hit its timeout before every task ended
	firstErr error         // the first error a task ended with, if any
}

// A run is one client given tasks GETs to do with workers goroutines
// against a fresh server for cfg, within timeout.
type run struct {
	cfg     ratelimittest.Config
	client  client
	tasks   int
	workers int
	timeout time.Duration
}

func (r run) do() result {
	srv := ratelimittest.NewServer(r.cfg)
	defer srv.Close()
	res := drive(r.client, srv.URL, r.tasks, r.workers, r.timeout)
	st := srv.Handler.Stats()
	res.refused = st.Refused
	res.requests = st.Requests
	return res
}

// drive has client c do tasks GETs of paths under url with workers
// goroutines, within timeout. The server's counts (refused, requests) are
// left for the caller to fill in.
func drive(c client, url string, tasks, workers int, timeout time.Duration) result {
	// Each run gets its own connection pool, so none inherits another's
	// connections; the transport is otherwise http.DefaultTransport's.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	get := c.new(recorder{base: transport})

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	var (
		mu  sync.Mutex
		res = result{client: c.name, tasks: tasks}
	)
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for i := range next {
				clock := new(taskClock)
				status, err := get(context.WithValue(ctx, taskClockKey{}, clock), url+"/items/"+strconv.Itoa(i))
				end := time.Now()
				mu.Lock()
				switch {
				case err != nil:
					res.errs++
					if res.firstErr == nil {
						res.firstErr = err
					}
				case status == http.StatusOK:
					res.ok++
				}
				if first, ok := clock.first(); ok {
					res.longest = max(res.longest, end.Sub(first))
				}
				mu.Unlock()
			}
		})
	}
feed:
	for i := range tasks {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	res.wall = time.Since(start)
	res.timedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
	return res
}

// A taskClock records when a task's first request reached the base
// transport, whatever retries and waits the client adds after that.
type taskClock struct {
	mu   sync.Mutex
	sent time.Time
}

type taskClockKey struct{}

// mark records now as the first send, unless one is recorded already.
func (c *taskClock) mark() {
	c.mu.Lock()
	if c.sent.IsZero() {
		c.sent = time.Now()
	}
	c.mu.Unlock()
}

// first returns the time of the first send, and whether there was one.
func (c *taskClock) first() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent, !c.sent.IsZero()
}

// recorder is the base transport every client sends through: it marks the
// taskClock of the request's context, then sends the request with base.
type recorder struct {
	base *http.Transport
}

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if c, ok := req.Context().Value(taskClockKey{}).(*taskClock); ok {
		c.mark()
	}
	return r.base.RoundTrip(req)
}

// CloseIdleConnections forwards to base, so that clients that call it reach
// the pool.
func (r recorder) CloseIdleConnections() {
	r.base.CloseIdleConnections()
}
