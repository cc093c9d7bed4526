// Command bench compares polite with other ways of retrying HTTP requests
// in Go, against the rate-limited servers of package ratelimittest, over
// loopback and in real time.
//
// Each scenario is a kind of server (an algorithm and the header dialect
// it speaks). For each scenario and each client, a fresh server is started
// and the client is given the same tasks (GETs) to do with the same number
// of workers; the command then prints, per scenario, a markdown table of
// what each client achieved.
//
// Usage, from the repository root:
//
//	(cd bench && go run .) [flags]
//
// The flags are:
//
//	-tasks n        requests each client must complete (default 100)
//	-workers n      concurrent workers per client (default 16)
//	-quota n        requests the server admits per window (default 20)
//	-window d       the server's window (default 2s)
//	-latency d      how long the server takes to serve an admitted request (default 10ms)
//	-timeout d      the cap on one client's run against one server (default 60s)
//	-only list      comma-separated scenarios to run (default all)
//	-clients list   comma-separated clients to run (default all; polite,plain with -middleware)
//	-middleware     run real Go rate-limiting middlewares as servers instead of the scenarios
//	-runs n         how many times to run each client against each server (default 1)
//	-phase d        with -middleware, start each server and run d into a second of the wall clock (default: at once)
//
// With -middleware, each server is a middleware of the Go ecosystem
// (go-chi/httprate, ulule/limiter) in front of a handler that answers after
// -latency, and -only selects middlewares instead of scenarios.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

func main() {
	var (
		tasks   = flag.Int("tasks", 100, "requests each client must complete")
		workers = flag.Int("workers", 16, "concurrent workers per client")
		quota   = flag.Int64("quota", 20, "requests the server admits per window")
		window  = flag.Duration("window", 2*time.Second, "the server's window")
		latency = flag.Duration("latency", 10*time.Millisecond, "how long the server takes to serve an admitted request")
		timeout = flag.Duration("timeout", 60*time.Second, "the cap on one client's run against one server")
		only    = flag.String("only", "", "comma-separated scenarios to run: "+names(scenarios, func(s scenario) string { return s.name })+" (default all)")
		which   = flag.String("clients", "", "comma-separated clients to run: "+names(clients, func(c client) string { return c.name })+" (default all; polite,plain with -middleware)")
		mw      = flag.Bool("middleware", false, "run real Go rate-limiting middlewares as servers: "+names(middlewares, func(m middleware) string { return m.name })+"; -only selects among them")
		runs    = flag.Int("runs", 1, "how many times to run each client against each server")
		phase   = flag.Duration("phase", -1, "with -middleware, start each server and run this far into a second of the wall clock, in [0, 1s); negative: at once")
	)
	flag.Usage = usage
	flag.Parse()
	if flag.NArg() > 0 || *tasks < 1 || *workers < 1 || *quota < 1 || *window <= 0 || *latency < 0 || *timeout <= 0 || *runs < 1 || *phase >= time.Second {
		fmt.Fprintln(os.Stderr, "bench: tasks, workers, quota and runs must be positive, window and timeout too, latency not negative; no arguments")
		flag.Usage()
		os.Exit(2)
	}
	if *mw && *which == "" {
		*which = "polite,plain"
	}
	cs, err := pick(clients, *which, func(c client) string { return c.name })
	exitOn(err, "-clients")
	if *mw {
		ms, err := pick(middlewares, *only, func(m middleware) string { return m.name })
		exitOn(err, "-only")
		if *quota > math.MaxInt32 {
			fmt.Fprintln(os.Stderr, "bench: -quota too large for a middleware")
			os.Exit(2)
		}
		runMiddlewares(os.Stdout, ms, cs, int(*quota), *window, *latency, *tasks, *workers, *runs, *timeout, *phase)
		return
	}
	ss, err := pick(scenarios, *only, func(s scenario) string { return s.name })
	exitOn(err, "-only")

	w := os.Stdout
	fmt.Fprintf(w, "%s · %s · GOMAXPROCS=%d · %d tasks, %d workers, quota %d per %v, latency %v, timeout %v per run\n",
		time.Now().Format("2006-01-02 15:04 MST"), runtime.Version(), runtime.GOMAXPROCS(0),
		*tasks, *workers, *quota, *window, *latency, *timeout)
	for _, s := range ss {
		cfg := s.config(*quota, *window, *latency)
		ideal := ratelimittest.Ideal(cfg, *tasks, *workers)
		stated := "quota not stated: refusals unavoidable"
		if s.honest {
			stated = "quota stated: no refusal needed"
		}
		fmt.Fprintf(w, "\n### %s: %s (ideal %v; %s)\n\n", s.name, s.about, round(ideal), stated)
		printHeader(w)
		for _, c := range cs {
			for i := range *runs {
				r := run{cfg: cfg, client: c, tasks: *tasks, workers: *workers, timeout: *timeout}.do()
				if *runs > 1 {
					r.client += fmt.Sprintf(" #%d", i+1)
				}
				printRow(w, r, ideal)
			}
		}
	}
}

// runMiddlewares prints, for each middleware of ms, a table of what each
// client of cs achieved against a fresh server of it, runs times each.
func runMiddlewares(w io.Writer, ms []middleware, cs []client, quota int, window, latency time.Duration, tasks, workers, runs int, timeout, phase time.Duration) {
	start := "at once"
	if phase >= 0 {
		start = fmt.Sprintf("%v into a second", phase)
	}
	fmt.Fprintf(w, "%s · %s · GOMAXPROCS=%d · middlewares · %d tasks, %d workers, quota %d per %v, latency %v, timeout %v per run, servers started %s\n",
		time.Now().Format("2006-01-02 15:04 MST"), runtime.Version(), runtime.GOMAXPROCS(0),
		tasks, workers, quota, window, latency, timeout, start)
	for _, m := range ms {
		ideal := m.ideal(quota, window, latency, tasks, workers)
		fmt.Fprintf(w, "\n### %s: %s (ideal %v)\n\n", m.name, m.about, round(ideal))
		printHeader(w)
		for _, c := range cs {
			for i := range runs {
				r := middlewareRun{m: m, client: c, quota: quota, window: window, latency: latency,
					tasks: tasks, workers: workers, timeout: timeout, phase: phase}.do()
				if runs > 1 {
					r.client += fmt.Sprintf(" #%d", i+1)
				}
				printRow(w, r, ideal)
			}
		}
	}
}

// usage prints the flags, then the scenarios and clients with what they are.
func usage() {
	w := flag.CommandLine.Output()
	fmt.Fprintln(w, "usage: bench [flags]\n\nflags:")
	flag.PrintDefaults()
	fmt.Fprintln(w, "\nscenarios:")
	for _, s := range scenarios {
		fmt.Fprintf(w, "  %-14s %s\n", s.name, s.about)
	}
	fmt.Fprintln(w, "\nmiddlewares (-middleware):")
	for _, m := range middlewares {
		fmt.Fprintf(w, "  %-18s %s\n", m.name, m.about)
	}
	fmt.Fprintln(w, "\nclients:")
	for _, c := range clients {
		fmt.Fprintf(w, "  %-14s %s\n", c.name, c.about)
	}
}

func printHeader(w io.Writer) {
	fmt.Fprintln(w, "| client | ok | refused | requests | wall | efficiency | longest task | notes |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|---|")
}

// printRow prints r as a table row. Efficiency is the ideal time over the
// wall time; it is shown only when every task succeeded, since a client
// that gives up early would otherwise look fast.
func printRow(w io.Writer, r result, ideal time.Duration) {
	eff := "—"
	if r.ok == r.tasks {
		eff = fmt.Sprintf("%.0f%%", 100*ideal.Seconds()/r.wall.Seconds())
	}
	var notes []string
	if r.timedOut {
		notes = append(notes, "timed out")
	}
	if failed := r.tasks - r.ok - r.errs; failed > 0 {
		notes = append(notes, fmt.Sprintf("%d ended without 200", failed))
	}
	if r.errs > 0 {
		notes = append(notes, fmt.Sprintf("%d errors, first: %v", r.errs, r.firstErr))
	}
	fmt.Fprintf(w, "| %s | %d/%d | %d | %d | %v | %s | %v | %s |\n",
		r.client, r.ok, r.tasks, r.refused, r.requests, round(r.wall), eff, round(r.longest),
		strings.ReplaceAll(strings.Join(notes, "; "), "|", `\|`))
}

// round rounds d for display: to 10ms.
func round(d time.Duration) time.Duration {
	return d.Round(10 * time.Millisecond)
}

// pick returns the items of all named in the comma-separated list, in the
// order of all; an empty list picks all of them.
func pick[T any](all []T, list string, name func(T) string) ([]T, error) {
	if list == "" {
		return all, nil
	}
	want := make(map[string]bool)
	for _, n := range strings.Split(list, ",") {
		want[strings.TrimSpace(n)] = true
	}
	var out []T
	for _, t := range all {
		if want[name(t)] {
			out = append(out, t)
			delete(want, name(t))
		}
	}
	for n := range want {
		return nil, fmt.Errorf("unknown name %q (known: %s)", n, names(all, name))
	}
	return out, nil
}

// names lists the names of all, comma-separated.
func names[T any](all []T, name func(T) string) string {
	var ns []string
	for _, t := range all {
		ns = append(ns, name(t))
	}
	return strings.Join(ns, ",")
}

// exitOn ends the program with a usage error if err is not nil, naming
// the flag at fault.
func exitOn(err error, flagName string) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: "+flagName+":", err)
		os.Exit(2)
	}
}
