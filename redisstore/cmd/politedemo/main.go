// Command politedemo runs polite's comparison with several worker
// processes sharing one Redis: each process is a separate program with its
// own polite.Transport and Budget, and the processes pace together through
// a redisstore.Store, as a fleet of pods would.
//
// Usage:
//
//	go -C redisstore run ./cmd/politedemo [flags] [scenario...]
//
// It starts a rate-limited server on 127.0.0.1 and a redis-server on a free
// loopback port (when -redis is not given; redis-server must then be on the
// PATH: on Debian, apt-get install redis-server). The scenarios, all run by
// default:
//
//	pace         3 processes x 16 workers, 300 tasks against a server of
//	             20 requests per 2 s (IETF draft-11 headers), sharing Redis
//	local        the same, each process on its own in-memory budget
//	retry-after  one refusal with Retry-After: 3: no process sends for 3 s
//	concurrency  a limit of 4 in flight (qu="concurrent-requests") shared
//	kill         SIGKILL one process with requests in flight: the others
//	             regain its slots when its leases end
//	outage       Redis stopped for 5 s mid-run and restarted
//	overhead     no limits: added latency per request and requests per
//	             second through one key, Redis against memory
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/politehttp/polite/ratelimittest"
	"github.com/politehttp/polite/redisstore"
	"github.com/redis/go-redis/v9"
)

var scenarios = []string{"pace", "local", "retry-after", "concurrency", "kill", "outage", "overhead"}

type demo struct {
	out     io.Writer
	procs   int
	workers int
	tasks   int
	redis   string       // address of the Redis used
	server  *redisServer // nil when -redis was given
	self    string       // this executable
	runs    int
}

func main() {
	if spec := os.Getenv(workerEnv); spec != "" {
		if err := runWorker(spec, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "politedemo worker:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "politedemo:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("politedemo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: politedemo [flags] [%s]...\n", strings.Join(scenarios, "|"))
		fs.PrintDefaults()
	}
	d := &demo{out: stdout}
	fs.IntVar(&d.procs, "procs", 3, "worker processes")
	fs.IntVar(&d.workers, "workers", 16, "concurrent workers in each process")
	fs.IntVar(&d.tasks, "tasks", 300, "tasks of the pace and local scenarios, in all")
	redisAddr := fs.String("redis", "", "address of a Redis to use (default: start a redis-server on a free loopback port)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // the usage, asked for
		}
		return err
	}
	which := fs.Args()
	if len(which) == 0 {
		which = scenarios
	}
	for _, s := range which {
		if !slices.Contains(scenarios, s) {
			return fmt.Errorf("unknown scenario %q (want %s)", s, strings.Join(scenarios, ", "))
		}
	}
	if d.procs < 1 || d.workers < 1 || d.tasks < 1 {
		return errors.New("-procs, -workers and -tasks must be at least 1")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	d.self = self

	d.redis = *redisAddr
	if d.redis == "" {
		srv, err := startRedis()
		if err != nil {
			return err
		}
		defer srv.stop()
		d.server, d.redis = srv, srv.addr()
		// Stop it on an interrupt too.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-sig
			srv.stop()
			os.Exit(130)
		}()
		fmt.Fprintf(stdout, "redis-server on %s (pid %d)\n", d.redis, srv.pid())
	}
	rdb := redis.NewClient(&redis.Options{Addr: d.redis})
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		return fmt.Errorf("no Redis at %s: %v", d.redis, err)
	}
	for _, s := range which {
		fmt.Fprintf(stdout, "\n== %s\n", s)
		var err error
		switch s {
		case "pace":
			err = d.pace(rdb, true)
		case "local":
			err = d.pace(rdb, false)
		case "retry-after":
			err = d.retryAfter()
		case "concurrency":
			err = d.concurrency()
		case "kill":
			err = d.kill()
		case "outage":
			err = d.outage()
		case "overhead":
			err = d.overhead()
		}
		if err != nil {
			return fmt.Errorf("%s: %v", s, err)
		}
	}
	return nil
}

// proc is a running worker process.
type proc struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	done   chan error
}

// start starts one worker process per job.
func (d *demo) start(jobs []job) ([]*proc, error) {
	var ps []*proc
	for _, j := range jobs {
		spec, _ := json.Marshal(j)
		p := &proc{cmd: exec.Command(d.self), done: make(chan error, 1)}
		p.cmd.Env = append(os.Environ(), workerEnv+"="+string(spec))
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, os.Stderr
		if err := p.cmd.Start(); err != nil {
			for _, q := range ps {
				q.cmd.Process.Kill()
				<-q.done
			}
			return nil, err
		}
		go func() { p.done <- p.cmd.Wait() }()
		ps = append(ps, p)
	}
	return ps, nil
}

// wait waits for the processes and returns the reports of those that
// finished.
func wait(ps []*proc) []report {
	var reps []report
	for _, p := range ps {
		if err := <-p.done; err != nil {
			continue
		}
		var r report
		if json.Unmarshal(p.stdout.Bytes(), &r) == nil {
			reps = append(reps, r)
		}
	}
	return reps
}

// jobs returns one job per process for tasks in all, starting together in
// a moment; redis false gives each process an in-memory budget.
func (d *demo) jobs(url string, tasks int, redis bool) []job {
	d.runs++
	prefix := fmt.Sprintf("politedemo:%d:%d:", os.Getpid(), d.runs)
	start := time.Now().Add(300 * time.Millisecond)
	var js []job
	for i := range d.procs {
		j := job{Name: fmt.Sprintf("p%d", i), URL: url, Prefix: prefix, Workers: d.workers, Start: start,
			Tasks: tasks / d.procs}
		if i < tasks%d.procs {
			j.Tasks++
		}
		if redis {
			j.Redis = d.redis
		}
		js = append(js, j)
	}
	return js
}

// totals sums reports.
type totals struct {
	ok, failed, errors, retries, down, up int
	calls                                 int64
	store                                 redisstore.Stats
	wall                                  time.Duration
	lat                                   []time.Duration
}

func sum(reps []report) totals {
	var t totals
	for _, r := range reps {
		t.ok += r.OK
		t.failed += r.Failed
		t.errors += r.Errors
		t.retries += r.Retries
		t.down += r.StoreDown
		t.up += r.StoreUp
		t.calls += r.Calls
		t.store.Updates += r.Store.Updates
		t.store.Swaps += r.Store.Swaps
		t.store.Stale += r.Store.Stale
		t.store.Blocked += r.Store.Blocked
		t.store.Notes += r.Store.Notes
		t.wall = max(t.wall, r.Wall)
		t.lat = append(t.lat, r.Latencies...)
	}
	slices.Sort(t.lat)
	return t
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// recorder wraps a handler and records every request's arrival, end and
// status.
type recorder struct {
	next     http.Handler
	mu       sync.Mutex
	inflight int
	by       map[string]int // in flight by process
	active   map[*http.Request]activeReq
	events   []event
}

type activeReq struct {
	proc  string
	start time.Time
}

type event struct {
	at       time.Time
	inflight int    // after the event
	proc     string // the process that sent the request
	mine     int    // in flight from that process, after the event
	status   int    // at the end of a request; 0 at its arrival
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	proc := r.Header.Get(procHeader)
	rec.mu.Lock()
	if rec.by == nil {
		rec.by = make(map[string]int)
	}
	if rec.active == nil {
		rec.active = make(map[*http.Request]activeReq)
	}
	rec.active[r] = activeReq{proc: proc, start: time.Now()}
	rec.inflight++
	rec.by[proc]++
	rec.events = append(rec.events, event{at: time.Now(), inflight: rec.inflight, proc: proc, mine: rec.by[proc]})
	rec.mu.Unlock()
	sw := &statusWriter{ResponseWriter: w}
	rec.next.ServeHTTP(sw, r)
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	if r.Context().Err() != nil {
		sw.status = -1 // the client went away
	}
	rec.mu.Lock()
	delete(rec.active, r)
	rec.inflight--
	rec.by[proc]--
	rec.events = append(rec.events, event{at: time.Now(), inflight: rec.inflight, proc: proc, mine: rec.by[proc], status: sw.status})
	rec.mu.Unlock()
}

// inFlight returns the requests of proc being served.
func (rec *recorder) inFlight(proc string) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.by[proc]
}

// starts returns when the requests of proc being served started.
func (rec *recorder) starts(proc string) []time.Time {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var ts []time.Time
	for _, a := range rec.active {
		if a.proc == proc {
			ts = append(ts, a.start)
		}
	}
	slices.SortFunc(ts, time.Time.Compare)
	return ts
}

func (rec *recorder) snapshot() []event {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.events)
}

// serve starts a loopback server for h.
func serve(h http.Handler) (url string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	return "http://" + l.Addr().String() + "/", func() { srv.Close() }, nil
}

var paceConfig = ratelimittest.Config{
	Policies: []ratelimittest.Policy{{Quota: 20, Window: 2 * time.Second}},
	Latency:  10 * time.Millisecond,
}

// pace runs the batch against 20 requests per 2 s, shared or not.
func (d *demo) pace(rdb *redis.Client, shared bool) error {
	h := ratelimittest.NewHandler(paceConfig)
	url, stop, err := serve(h)
	if err != nil {
		return err
	}
	defer stop()
	js := d.jobs(url, d.tasks, shared)
	ps, err := d.start(js)
	if err != nil {
		return err
	}
	reps := wait(ps)
	st := h.Stats()
	t := sum(reps)
	ideal := ratelimittest.Ideal(paceConfig, d.tasks, d.procs*d.workers)
	what := "each process on its own in-memory budget"
	if shared {
		what = "sharing one Redis"
	}
	fmt.Fprintf(d.out, "%d processes x %d workers, %s; server: %d requests per %v, IETF headers, %v latency\n",
		d.procs, d.workers, what, paceConfig.Policies[0].Quota, paceConfig.Policies[0].Window, paceConfig.Latency)
	fmt.Fprintf(d.out, "tasks ok %d/%d, refused by the server %d, requests %d, retries %d\n",
		t.ok, d.tasks, st.Refused, st.Requests, t.retries)
	fmt.Fprintf(d.out, "wall %.2fs, ideal %.2fs, efficiency %.3f\n",
		t.wall.Seconds(), ideal.Seconds(), ideal.Seconds()/t.wall.Seconds())
	if shared {
		fmt.Fprintf(d.out, "Redis commands on requests' paths: %d, %.2f per request\n",
			t.calls, float64(t.calls)/float64(max(st.Requests, 1)))
		fmt.Fprintf(d.out, "store: %+v\n", t.store)
		if n, err := stateSize(rdb, js[0].Prefix); err == nil {
			fmt.Fprintf(d.out, "state of the origin in Redis: %d bytes\n", n)
		}
	}
	return nil
}

// stateSize returns the size of the state under prefix (one key).
func stateSize(rdb *redis.Client, prefix string) (int64, error) {
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) == 0 {
		return 0, errors.New("no state")
	}
	return rdb.HStrLen(ctx, keys[0], "s").Result()
}

// retryAfter refuses one request with Retry-After: 3 and reports what
// arrived in the next 3 s.
func (d *demo) retryAfter() error {
	const refuseAt = 40
	inner := ratelimittest.NewHandler(ratelimittest.Config{Latency: 10 * time.Millisecond})
	var mu sync.Mutex
	n := 0
	var refusedAt time.Time
	var arrivals []time.Time
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		now := time.Now()
		arrivals = append(arrivals, now)
		refuse := n == refuseAt
		if refuse {
			refusedAt = now
		}
		mu.Unlock()
		if refuse {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		inner.ServeHTTP(w, r)
	})
	url, stop, err := serve(h)
	if err != nil {
		return err
	}
	defer stop()
	tasks := 40 * d.procs
	ps, err := d.start(d.jobs(url, tasks, true))
	if err != nil {
		return err
	}
	t := sum(wait(ps))
	mu.Lock()
	defer mu.Unlock()
	var during, first int
	next := time.Duration(0)
	for _, a := range arrivals {
		d := a.Sub(refusedAt)
		switch {
		case d <= 0:
		case d < 5*time.Millisecond:
			first++ // sent before the refusal was known
		case d < 3*time.Second:
			during++
		case next == 0:
			next = d
		}
	}
	fmt.Fprintf(d.out, "%d processes x %d workers, %d tasks, no stated limits; request %d refused with Retry-After: 3\n",
		d.procs, d.workers, tasks, refuseAt)
	fmt.Fprintf(d.out, "arrivals in the 3 s after the refusal: %d (and %d within 5 ms of it, sent before it was seen)\n", during, first)
	fmt.Fprintf(d.out, "first arrival after it: %.3fs; tasks ok %d/%d\n", next.Seconds(), t.ok, tasks)
	return nil
}

var concConfig = ratelimittest.Config{
	Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.Concurrency, Quota: 4}},
	Latency:  100 * time.Millisecond,
}

// concurrency shares a limit of 4 in flight.
func (d *demo) concurrency() error {
	h := ratelimittest.NewHandler(concConfig)
	url, stop, err := serve(h)
	if err != nil {
		return err
	}
	defer stop()
	tasks := 40 * d.procs
	ps, err := d.start(d.jobs(url, tasks, true))
	if err != nil {
		return err
	}
	t := sum(wait(ps))
	st := h.Stats()
	ideal := ratelimittest.Ideal(concConfig, tasks, d.procs*d.workers)
	fmt.Fprintf(d.out, "%d processes x %d workers, %d tasks; server: 4 concurrent requests, %v each\n",
		d.procs, d.workers, tasks, concConfig.Latency)
	fmt.Fprintf(d.out, "peak in flight at the server %d; refused %d; tasks ok %d/%d\n", st.PeakInFlight, st.Refused, t.ok, tasks)
	fmt.Fprintf(d.out, "wall %.2fs, ideal %.2fs, efficiency %.3f\n", t.wall.Seconds(), ideal.Seconds(), ideal.Seconds()/t.wall.Seconds())
	return nil
}

// kill kills one process with requests in flight under a limit of 4.
func (d *demo) kill() error {
	const lease = 3 * time.Second
	cfg := ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.Concurrency, Quota: 4}},
		Latency:  time.Second,
	}
	h := ratelimittest.NewHandler(cfg)
	rec := &recorder{next: h}
	url, stop, err := serve(rec)
	if err != nil {
		return err
	}
	defer stop()
	js := d.jobs(url, 24*d.procs, true)
	for i := range js {
		js[i].Lease = lease
	}
	ps, err := d.start(js)
	if err != nil {
		return err
	}
	// Kill p0 while it has requests in flight, once the run is going.
	time.Sleep(time.Until(js[0].Start.Add(1500 * time.Millisecond)))
	for deadline := time.Now().Add(10 * time.Second); rec.inFlight("p0") == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	starts := rec.starts("p0")
	ps[0].cmd.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	ps[0].cmd.Process.Signal(syscall.SIGKILL)
	reps := wait(ps)
	t := sum(reps)
	evs := rec.snapshot()
	// In flight at the server when it was killed, and when the others
	// filled the 4 slots again.
	// When the others alone had 4 in flight again.
	regained := time.Duration(-1)
	for _, e := range evs {
		if !e.at.Before(killed) && e.proc != "p0" && othersInFlight(evs, e) == 4 {
			regained = e.at.Sub(killed)
			break
		}
	}
	before := len(starts)
	fmt.Fprintf(d.out, "%d processes x %d workers; server: 4 concurrent requests, %v each; Budget.Lease %v\n",
		d.procs, d.workers, cfg.Latency, lease)
	fmt.Fprintf(d.out, "p0 killed (SIGKILL) with %d requests in flight at the server", before)
	if before > 0 {
		fmt.Fprintf(d.out, ", the oldest sent %.2fs before", killed.Sub(starts[0]).Seconds())
	}
	fmt.Fprintln(d.out)
	fmt.Fprintf(d.out, "the others alone had 4 in flight %.2fs after the kill (bound: a lease, %v + %v, after the request started)\n",
		regained.Seconds(), lease, lease/16)
	fmt.Fprintf(d.out, "peak in flight %d, refused %d; survivors' tasks ok %d, failed %d, errors %d\n",
		h.Stats().PeakInFlight, h.Stats().Refused, t.ok, t.failed, t.errors)
	return nil
}

// outage stops Redis for 5 s in the middle of the pace batch.
func (d *demo) outage() error {
	if d.server == nil {
		fmt.Fprintln(d.out, "skipped: needs a redis-server this demo started (run without -redis)")
		return nil
	}
	h := ratelimittest.NewHandler(paceConfig)
	rec := &recorder{next: h}
	url, stop, err := serve(rec)
	if err != nil {
		return err
	}
	defer stop()
	js := d.jobs(url, d.tasks, true)
	ps, err := d.start(js)
	if err != nil {
		return err
	}
	time.Sleep(time.Until(js[0].Start.Add(6 * time.Second)))
	down := time.Now()
	d.server.stop()
	time.Sleep(5 * time.Second)
	up := time.Now()
	if err := d.server.start(); err != nil {
		return err
	}
	t := sum(wait(ps))
	var refused, gap, after int
	for _, e := range rec.snapshot() {
		if e.status != http.StatusTooManyRequests {
			continue
		}
		refused++
		switch {
		case e.at.Before(down):
		case e.at.Before(up):
			gap++
		default:
			after++
		}
	}
	ideal := ratelimittest.Ideal(paceConfig, d.tasks, d.procs*d.workers)
	fmt.Fprintf(d.out, "pace batch; Redis stopped at +6s for 5s, then started again (empty)\n")
	fmt.Fprintf(d.out, "tasks ok %d/%d, failed %d, errors %d; store-down events %d, store-up %d\n",
		t.ok, d.tasks, t.failed, t.errors, t.down, t.up)
	fmt.Fprintf(d.out, "refused by the server: %d in all, %d during the outage, %d after it\n", refused, gap, after)
	fmt.Fprintf(d.out, "wall %.2fs, ideal %.2fs, efficiency %.3f\n", t.wall.Seconds(), ideal.Seconds(), ideal.Seconds()/t.wall.Seconds())
	return nil
}

// overhead compares Redis with memory against a server with no limits.
func (d *demo) overhead() error {
	h := ratelimittest.NewHandler(ratelimittest.Config{})
	url, stop, err := serve(h)
	if err != nil {
		return err
	}
	defer stop()
	// One worker per process pausing 5 ms between requests: a moderate
	// rate, each process's update seldom racing another's; then as fast
	// as they go.
	for _, c := range []struct {
		workers, each int
		gap           time.Duration
	}{{1, 400, 5 * time.Millisecond}, {1, 2000, 0}, {d.workers, 2000, 0}} {
		if err := d.overheadOf(url, c.workers, c.each, c.gap); err != nil {
			return err
		}
	}
	return nil
}

func (d *demo) overheadOf(url string, workers, each int, gap time.Duration) error {
	tasks := each * d.procs
	fmt.Fprintf(d.out, "%d processes x %d workers, %d requests to one origin with no limits", d.procs, workers, tasks)
	if gap > 0 {
		fmt.Fprintf(d.out, ", %v between a worker's requests", gap)
	}
	fmt.Fprintln(d.out)
	var med [2]time.Duration
	for i, shared := range []bool{false, true} {
		js := d.jobs(url, tasks, shared)
		for i := range js {
			js[i].Workers, js[i].Gap = workers, gap
		}
		ps, err := d.start(js)
		if err != nil {
			return err
		}
		t := sum(wait(ps))
		name := "memory"
		if shared {
			name = "Redis "
		}
		med[i] = percentile(t.lat, 0.5)
		fmt.Fprintf(d.out, "%s: median %v, p99 %v per request; %.0f requests/s; ok %d/%d",
			name, med[i].Round(time.Microsecond), percentile(t.lat, 0.99).Round(time.Microsecond),
			float64(t.ok)/t.wall.Seconds(), t.ok, tasks)
		if shared {
			fmt.Fprintf(d.out, "; %.2f Redis commands per request; store %+v", float64(t.calls)/float64(tasks), t.store)
		}
		fmt.Fprintln(d.out)
	}
	fmt.Fprintf(d.out, "added by Redis: %v at the median\n", (med[1] - med[0]).Round(time.Microsecond))
	return nil
}

// redisServer is a redis-server this demo started.
type redisServer struct {
	port int
	dir  string
	mu   sync.Mutex
	cmd  *exec.Cmd
}

// startRedis starts redis-server on a free loopback port, with no
// persistence.
func startRedis() (*redisServer, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, errors.New("redis-server is not on the PATH: install it (Debian: apt-get install redis-server) or pass -redis host:port")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "politedemo-redis")
	if err != nil {
		return nil, err
	}
	s := &redisServer{port: port, dir: dir}
	return s, s.start()
}

func (s *redisServer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

func (s *redisServer) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

func (s *redisServer) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--logfile", filepath.Join(s.dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	for range 200 {
		if c, err := net.Dial("tcp", s.addr()); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("redis-server did not start on %s", s.addr())
}

// stop stops the server by its PID and waits for it.
func (s *redisServer) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	s.cmd = nil
}

// othersInFlight returns the requests in flight from processes other than
// p0 just after e.
func othersInFlight(evs []event, e event) int {
	last := map[string]int{}
	for _, x := range evs {
		if x.at.After(e.at) {
			break
		}
		last[x.proc] = x.mine
	}
	n := 0
	for p, m := range last {
		if p != "p0" {
			n += m
		}
	}
	return n
}
