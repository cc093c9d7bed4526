package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDemoJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"-json", "-tasks", "10", "-workers", "4", "-quota", "5", "-window", "1s"}
	if err := runDemo(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("runDemo(%q) = %v; stderr:\n%s", args, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("demo -json printed %d lines, want 2:\n%s", len(lines), stdout.String())
	}
	results := map[string]demoResult{}
	for _, l := range lines {
		var raw map[string]any
		if err := json.Unmarshal([]byte(l), &raw); err != nil {
			t.Fatalf("line %q is not JSON: %v", l, err)
		}
		for _, k := range []string{"client", "tasks", "ok", "rejected", "wall_s", "efficiency", "requests"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("line %q lacks key %q", l, k)
			}
		}
		var r demoResult
		json.Unmarshal([]byte(l), &r)
		results[r.Client] = r
		want := demoServer{Algorithm: "fixed-window", Dialect: "ietf", Quota: 5, WindowS: 1, LatencyS: 0.01}
		if r.Server != want {
			t.Errorf("%s: server %+v, want %+v (the flags and defaults it ran with)", r.Client, r.Server, want)
		}
	}
	t.Logf("%s", stdout.String())

	p, ok := results["polite"]
	if !ok {
		t.Fatalf("no polite line")
	}
	if p.Tasks != 10 || p.OK != 10 || p.Rejected != 0 || p.Requests != 10 {
		t.Errorf("polite: tasks %d, ok %d, rejected %d, requests %d; want 10, 10, 0, 10", p.Tasks, p.OK, p.Rejected, p.Requests)
	}
	if p.Efficiency <= 0 || p.Efficiency > 1 {
		t.Errorf("polite efficiency = %v, want in (0, 1]", p.Efficiency)
	}
	// Four workers against five requests per second: a plain client runs
	// into the limit in the first second.
	if pl := results["plain"]; pl.Tasks != 10 || pl.Rejected == 0 || pl.Requests != pl.Rejected+pl.OK {
		t.Errorf("plain: tasks %d, ok %d, rejected %d, requests %d; want 10 tasks, some rejected, requests = ok + rejected",
			pl.Tasks, pl.OK, pl.Rejected, pl.Requests)
	}
}

func TestDemoTable(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"-tasks", "4", "-workers", "2", "-quota", "100", "-window", "1s", "-latency", "0"}
	if err := runDemo(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("runDemo(%q) = %v; stderr:\n%s", args, err, stderr.String())
	}
	for _, want := range []string{"client  tasks  ok  rejected  requests  wall", "\nplain   4      4   0", "\npolite  4      4   0"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("demo output does not contain %q:\n%s", want, stdout.String())
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("demo wrote %q to stderr, which is not a terminal", stderr.String())
	}
}

// TestDemoStream runs the demo against a server that streams its bodies
// and admits two requests at once: polite keeps a request in flight until
// its body is read, so the server refuses none.
func TestDemoStream(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"-json", "-tasks", "8", "-workers", "4", "-algorithm", "concurrency", "-quota", "2", "-stream", "200ms"}
	if err := runDemo(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("runDemo(%q) = %v; stderr:\n%s", args, err, stderr.String())
	}
	t.Logf("%s", stdout.String())
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var r demoResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q is not JSON: %v", l, err)
		}
		if r.Server.StreamS != 0.2 {
			t.Errorf("%s: stream_s = %v, want 0.2", r.Client, r.Server.StreamS)
		}
		if r.Client == "polite" && (r.OK != 8 || r.Rejected != 0 || r.Requests != 8) {
			t.Errorf("polite: ok %d, rejected %d, requests %d; want 8, 0, 8", r.OK, r.Rejected, r.Requests)
		}
	}
}

// A run that a perfect client makes in no time (no latency, tasks within
// the quota) has no efficiency to show: "n/a". It showed 0%, the worst
// possible figure, for a run with no refusal and no wait.
func TestDemoEfficiencyNoIdeal(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"-tasks", "4", "-workers", "2", "-quota", "100", "-latency", "0"}
	if err := runDemo(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stdout.String(), " 0%") || !strings.Contains(stdout.String(), "n/a") {
		t.Errorf("a run with no refusal and no wait shows 0%% efficiency:\n%s", stdout.String())
	}
}

// SIGINT and SIGTERM (demo's context) stop demo while it computes the
// perfect client's time, which takes time linear in -tasks: demo ignored
// them until ratelimittest.Ideal returned (11.6 s for -tasks 100000000).
func TestDemoStopsWhenCancelledDuringIdeal(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var stdout, stderr syncBuffer
	errc := make(chan error, 1)
	go func() { errc <- runDemo(ctx, []string{"-tasks", "10000000", "-json"}, &stdout, &stderr) }()
	time.Sleep(50 * time.Millisecond) // Ideal takes about 1.5 s, more with -race
	start := time.Now()
	cancel()
	err := <-errc
	if took := time.Since(start); took > 500*time.Millisecond || !errors.Is(err, context.Canceled) {
		t.Errorf("demo returned %v %v after its context ended; want context.Canceled at once", err, took.Round(time.Millisecond))
	}
}

// demo starts at most one worker per task, and says so.
func TestDemoWorkersBoundedByTasks(t *testing.T) {
	var stdout, stderr bytes.Buffer
	var err error
	n := extraGoroutines(func() {
		err = runDemo(t.Context(), []string{"-json", "-tasks", "2", "-workers", "5000", "-quota", "100", "-latency", "0s"}, &stdout, &stderr)
	})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	if n > 100 {
		t.Errorf("2 tasks with -workers 5000: %d goroutines more; want about as many workers as tasks", n)
	}
	for line := range strings.Lines(stdout.String()) {
		var r demoResult
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Workers != 2 {
			t.Errorf("demo -json line %q: workers %d (%v), want 2", line, r.Workers, err)
		}
	}
}
