package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

const demoAbout = `
Demo starts a rate-limited server on 127.0.0.1 and runs the same batch of
GET requests with the same number of workers twice: first through a plain
http.Client with the retry loop most programs have (on a 429 or 503, sleep
Retry-After if it is a number of seconds, else 1s; give up after -attempts
sends), then through polite.Wrap(&http.Client{}). The server is reset between
the runs. It then compares them: tasks that succeeded, requests the server
refused, wall time, and efficiency, the time a perfect client would need
(ratelimittest.Ideal) divided by the wall time, when every task succeeded
(n/a, and 0 with -json, otherwise). With -json, each line also
gives the server's settings (algorithm, dialect, quota, window_s, latency_s,
and stream_s with -stream). With -stream, the server streams each admitted response's body
as server-sent events over that time, and a request counts at the server
(for -algorithm concurrency) until its body is written; every task reads
its body to the end.`

// demoRedisHint says where the multi-process comparison lives: in the
// redisstore module, so that this command does not depend on a Redis client.
const demoRedisHint = `The comparison with several worker processes sharing one Redis is in the
redisstore module. From the repository's root:

	go -C redisstore run ./cmd/politedemo

It starts redis-server on a free loopback port if it is on the PATH (on
Debian: apt-get install redis-server), or uses -redis host:port.
`

// demoResult is the outcome of one client's run; its JSON form is one line
// of demo -json.
type demoResult struct {
	Client     string     `json:"client"`
	Server     demoServer `json:"server"`
	Tasks      int        `json:"tasks"`
	Workers    int        `json:"workers"`
	OK         int        `json:"ok"`
	Rejected   int        `json:"rejected"`
	Requests   int        `json:"requests"`
	Peak       int        `json:"peak_in_flight"` // most admitted requests (or streams) the server served at once
	WallS      float64    `json:"wall_s"`
	IdealS     float64    `json:"ideal_s"`
	Efficiency float64    `json:"efficiency"` // ideal over wall time; 0 when a task failed
}

// demoServer is the settings of the demo's server, so that each JSON line
// says what it ran against.
type demoServer struct {
	Algorithm string  `json:"algorithm"`
	Dialect   string  `json:"dialect"`
	Quota     int64   `json:"quota"`
	WindowS   float64 `json:"window_s"` // 0 for concurrency, which has none
	LatencyS  float64 `json:"latency_s"`
	StreamS   float64 `json:"stream_s,omitempty"` // how long each body streams; 0: sent whole
}

// newDemoServer returns the settings of cfg, which has one policy.
func newDemoServer(cfg ratelimittest.Config) demoServer {
	p := cfg.Policies[0]
	s := demoServer{
		Algorithm: string(p.Algorithm),
		Dialect:   string(cfg.Dialect),
		Quota:     p.Quota,
		LatencyS:  round3(cfg.Latency.Seconds()),
		StreamS:   round3(cfg.Stream.Seconds()),
	}
	if p.Algorithm != ratelimittest.Concurrency {
		s.WindowS = round3(p.Window.Seconds())
	}
	return s
}

// demoClient is one way of doing a task: GET url until done or given up.
// It reports whether the task succeeded (a 2xx response).
type demoClient struct {
	name string
	do   func(ctx context.Context, url string) bool
}

// runDemo implements "polite demo".
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", "[flags]", demoAbout, stderr)
	var pf policyFlags
	pf.register(fs, 10, time.Second)
	tasks := fs.Int("tasks", 60, "requests in the batch")
	workers := fs.Int("workers", 8, "concurrent workers, for each client, at most one per task")
	attempts := fs.Int("attempts", 5, "sends per task of the plain client, counting the first")
	latency := fs.Duration("latency", 10*time.Millisecond, "time the server takes to serve an admitted request")
	stream := fs.Duration("stream", 0, "time over which the server streams each admitted body as server-sent events (0: sent whole)")
	jsonOut := fs.Bool("json", false, "print one JSON object per client per line instead of a table")
	redisHint := fs.Bool("redis", false, "print how to run the comparison with several processes sharing one Redis")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *redisHint {
		fmt.Fprint(stdout, demoRedisHint)
		return nil
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %s", shownArgs(fs.Args()))
	}
	if *tasks < 1 || *workers < 1 || *attempts < 1 {
		return usagef("-tasks, -workers and -attempts must be at least 1")
	}
	if *stream < 0 || *latency < 0 {
		return usagef("-stream and -latency must not be negative, got %v and %v", *stream, *latency)
	}
	// A worker past the tasks would have nothing to do, and each costs
	// memory; the perfect client's time is the same without it.
	*workers = min(*workers, *tasks)
	cfg, err := pf.config()
	if err != nil {
		return err
	}
	cfg.Latency = *latency
	cfg.Stream = *stream

	srv := ratelimittest.NewServer(cfg)
	defer srv.Close()
	ideal, err := idealTime(ctx, cfg, *tasks, *workers)
	if err != nil {
		return err
	}

	// Each client gets a transport of its own that keeps a connection per
	// worker, so that neither run pays for the other's connections.
	newBase := func() *http.Transport {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = *workers
		return t
	}
	plainBase, politeBase := newBase(), newBase()
	defer plainBase.CloseIdleConnections()
	defer politeBase.CloseIdleConnections()
	clients := []demoClient{
		{"plain", plainDo(&http.Client{Transport: plainBase}, *attempts)},
		{"polite", politeDo(polite.Wrap(&http.Client{Transport: politeBase}))},
	}

	live := newLiveLine(stderr)
	if !*jsonOut {
		desc := pf.describe()
		if *stream > 0 {
			desc += fmt.Sprintf(", bodies streamed over %v", *stream)
		}
		fmt.Fprintf(stdout, "%d tasks, %d workers; server: %s; a perfect client takes %s\n",
			*tasks, *workers, desc, seconds(ideal))
	}
	var results []demoResult
	for _, c := range clients {
		srv.Handler.Reset()
		r, err := runBatch(ctx, c, srv, *tasks, *workers, live)
		if err != nil {
			return err
		}
		r.Server = newDemoServer(cfg)
		r.IdealS = round3(ideal.Seconds())
		if r.WallS > 0 && r.OK == r.Tasks {
			// A client that gave up on tasks did less than a perfect one:
			// its wall time is no measure of its pace.
			r.Efficiency = round3(ideal.Seconds() / r.WallS)
		}
		results = append(results, r)
	}

	if *jsonOut {
		enc := json.NewEncoder(stdout)
		for _, r := range results {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "client\ttasks\tok\trejected\trequests\twall\tefficiency\tpeak in flight")
	for _, r := range results {
		eff := fmt.Sprintf("%.0f%%", 100*r.Efficiency)
		switch {
		case r.OK < r.Tasks:
			eff = "n/a" // tasks failed: nothing to compare
		case r.IdealS == 0:
			eff = "n/a" // a perfect client takes no time: nothing to compare
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1fs\t%s\t%d\n",
			r.Client, r.Tasks, r.OK, r.Rejected, r.Requests, r.WallS, eff, r.Peak)
	}
	return tw.Flush()
}

// idealTime returns ratelimittest.Ideal(cfg, tasks, workers), or ctx's
// error as soon as ctx ends: Ideal takes time linear in tasks (seconds for
// a hundred million), and does not stop for a context. Its goroutine is
// then left behind, to end with Ideal or the process.
func idealTime(ctx context.Context, cfg ratelimittest.Config, tasks, workers int) (time.Duration, error) {
	done := make(chan time.Duration, 1)
	go func() { done <- ratelimittest.Ideal(cfg, tasks, workers) }()
	select {
	case d := <-done:
		return d, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// runBatch does tasks GETs to srv through c with workers workers, drawing
// progress on live, and reports what happened, from the client's side (ok)
// and the server's (rejected, requests).
func runBatch(ctx context.Context, c demoClient, srv *ratelimittest.Server, tasks, workers int, live *liveLine) (demoResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var done, ok atomic.Int64
	start := time.Now()
	status := func() string {
		st := srv.Handler.Stats()
		return fmt.Sprintf("%-7s %d/%d done, %d ok, %d refused, %s",
			c.name, done.Load(), tasks, ok.Load(), st.Refused, seconds(time.Since(start)))
	}
	stop := every(ctx, live.on, 100*time.Millisecond, func() { live.draw(status()) })

	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				if c.do(ctx, srv.URL+"/task/"+strconv.Itoa(i)) {
					ok.Add(1)
				}
				done.Add(1)
			}
		})
	}
feed:
	for i := range tasks {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	wall := time.Since(start)
	stop()
	live.finish(status()) // interrupted too: the error goes on a line of its own
	if err := ctx.Err(); err != nil {
		return demoResult{}, err
	}

	st := srv.Handler.Stats()
	return demoResult{
		Client:   c.name,
		Tasks:    tasks,
		Workers:  workers,
		OK:       int(ok.Load()),
		Rejected: st.Refused,
		Requests: st.Requests,
		Peak:     st.PeakInFlight,
		WallS:    round3(wall.Seconds()),
	}, nil
}

// plainDo is the retry loop a program without polite typically has: on a
// 429 or 503, sleep Retry-After when it is a number of seconds, else one
// second, and try again, up to attempts sends.
func plainDo(client *http.Client, attempts int) func(context.Context, string) bool {
	return func(ctx context.Context, url string) bool {
		for attempt := 1; ; attempt++ {
			status, header, err := getOnce(ctx, client, url)
			if err != nil {
				return false
			}
			if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
				return status/100 == 2
			}
			if attempt >= attempts {
				return false
			}
			wait := time.Second
			if s, err := strconv.Atoi(header.Get("Retry-After")); err == nil && s >= 0 {
				wait = time.Duration(s) * time.Second
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return false
			case <-t.C:
			}
		}
	}
}

// politeDo sends one GET through a polite client: pacing and retries are
// the Transport's business.
func politeDo(client *http.Client) func(context.Context, string) bool {
	return func(ctx context.Context, url string) bool {
		status, _, err := getOnce(ctx, client, url)
		return err == nil && status/100 == 2
	}
}

// getOnce sends one GET, reads and closes the body, and returns the status
// and header of the response.
func getOnce(ctx context.Context, client *http.Client, url string) (int, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header, nil
}

// round3 rounds x to three decimals, for JSON output.
func round3(x float64) float64 {
	return math.Round(x*1000) / 1000
}
