package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// startServe runs serve with args in the background and returns its base
// URL, its output, and a function that stops it and returns its error.
func startServe(t *testing.T, args ...string) (string, *syncBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var stdout, stderr syncBuffer
	errc := make(chan error, 1)
	go func() { errc <- runServe(ctx, args, &stdout, &stderr) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-errc
	})
	addr := regexp.MustCompile(`serving (http://\S+)/ `)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stdout.String()); m != nil {
			return m[1], &stdout, stop
		}
		select {
		case err := <-errc:
			t.Fatalf("runServe(%q) = %v before serving; stderr:\n%s", args, err, stderr.String())
		default:
		}
	}
	stop()
	t.Fatalf("runServe(%q) did not say where it listens; stdout:\n%s", args, stdout.String())
	return "", nil, nil
}

func TestServe(t *testing.T) {
	base, out, stop := startServe(t, "-addr", "127.0.0.1:0", "-quota", "1", "-window", "1m", "-problem")
	get := func() (*http.Response, string) {
		resp, err := http.Get(base + "/hello?x=1")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, _ := get()
	if resp.StatusCode != 200 || resp.Header.Get("RateLimit-Policy") != `"default";q=1;w=60` {
		t.Errorf("first GET: %s, RateLimit-Policy %q; want 200 and the policy", resp.Status, resp.Header.Get("RateLimit-Policy"))
	}
	resp, body := get()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "quota-exceeded") {
		t.Errorf("second GET: %s, Retry-After %q, body %q; want 429, a Retry-After, a problem document", resp.Status, resp.Header.Get("Retry-After"), body)
	}
	if err := stop(); err != nil {
		t.Errorf("runServe after cancel = %v, want nil", err)
	}
	log := out.String()
	for _, re := range []string{
		`\d\d:\d\d:\d\d\.\d{3} GET /hello\?… 200  RateLimit: "default";r=0;t=60  RateLimit-Policy: "default";q=1;w=60\n`,
		`\d\d:\d\d:\d\d\.\d{3} GET /hello\?… 429  RateLimit: "default";r=0;t=60  RateLimit-Policy: "default";q=1;w=60  Retry-After: 60\n`,
	} {
		if !regexp.MustCompile(re).MatchString(log) {
			t.Errorf("serve log does not match %q:\n%s", re, log)
		}
	}
	if strings.Contains(log, "x=1") {
		t.Errorf("serve log shows the query (it may hold a key):\n%s", log)
	}
}

func TestServeDialectAndFaults(t *testing.T) {
	base, out, stop := startServe(t, "-addr", "[::1]:0", "-dialect", "github", "-age", "2s", "-inflate", "3", "-quota", "10")
	defer stop()
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-RateLimit-Limit"); got != "30" || resp.Header.Get("Age") != "2" {
		t.Errorf("X-RateLimit-Limit %q, Age %q; want 30 (inflated) and 2", got, resp.Header.Get("Age"))
	}
	if err := stop(); err != nil {
		t.Errorf("runServe after cancel = %v, want nil", err)
	}
	if !strings.Contains(out.String(), "X-RateLimit-Limit: 30") || !strings.Contains(out.String(), "Age: 2") {
		t.Errorf("serve log lacks the fields:\n%s", out.String())
	}
}

// The flags added for ratelimittest's algorithms, dialects and faults
// reach the server: -dialect x-ratelimit-date with -utc-dates, -round-down
// and -retry-after-zero, -no-retry-after, and -algorithm leaky-bucket with -burst and
// -dialect httprate. (The others' values are checked by
// TestBadFlagValues.)
func TestServeFlagsOfEveryFault(t *testing.T) {
	get := func(base string) *http.Response {
		resp, err := http.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}

	base, _, stop := startServe(t, "-addr", "127.0.0.1:0", "-quota", "1", "-window", "1m",
		"-dialect", "x-ratelimit-date", "-utc-dates", "-round-down", "-retry-after-zero")
	get(base)
	resp := get(base)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "0" || !strings.HasSuffix(resp.Header.Get("X-RateLimit-Reset"), " UTC") {
		t.Errorf("second GET: %s, Retry-After %q, X-RateLimit-Reset %q; want 429, 0, a date in UTC",
			resp.Status, resp.Header.Get("Retry-After"), resp.Header.Get("X-RateLimit-Reset"))
	}
	if err := stop(); err != nil {
		t.Errorf("runServe after cancel = %v, want nil", err)
	}

	// -no-retry-after: the fault of ratelimittest's RetryAfter < 0, which
	// no flag gave before.
	base, _, stop = startServe(t, "-addr", "127.0.0.1:0", "-quota", "1", "-window", "1m", "-no-retry-after")
	get(base)
	if resp := get(base); resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "" || resp.Header.Get("RateLimit") == "" {
		t.Errorf("-no-retry-after, second GET: %s, Retry-After %q, RateLimit %q; want 429 with the fields and no Retry-After",
			resp.Status, resp.Header.Get("Retry-After"), resp.Header.Get("RateLimit"))
	}
	stop()

	base, out, stop := startServe(t, "-addr", "127.0.0.1:0", "-quota", "1", "-window", "1m",
		"-algorithm", "leaky-bucket", "-burst", "2", "-dialect", "httprate")
	var codes []int
	for range 4 {
		codes = append(codes, get(base).StatusCode)
	}
	if want := []int{200, 200, 200, 429}; !slices.Equal(codes, want) {
		t.Errorf("leaky bucket, burst 2: statuses %v, want %v", codes, want)
	}
	stop()
	if !strings.Contains(out.String(), "leaky-bucket 1 per 1m0s burst 2, httprate fields") {
		t.Errorf("serve does not describe the policy with its burst:\n%s", out.String())
	}
}

func TestServeRefusesPublicAddress(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "192.0.2.1:0", "example.com:80"} {
		err := runServe(t.Context(), []string{"-addr", addr}, io.Discard, io.Discard)
		var uerr *usageError
		if !errors.As(err, &uerr) {
			t.Errorf("runServe(-addr %s) = %v, want a usage error", addr, err)
		}
	}
}

// serve and demo run the same server by default: serve is how one looks at
// what demo measured.
func TestServeDefaultsMatchDemo(t *testing.T) {
	defaults := func(cmd string) map[string]string {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), []string{"help", cmd}, &stdout, &stderr); code != 0 {
			t.Fatalf("polite help %s exited %d", cmd, code)
		}
		// PrintDefaults writes "  -name type\n    \tusage (default v)".
		out := map[string]string{}
		flags := regexp.MustCompile(`(?m)^  -(\w+)[^\n]*\n[^\n]*\(default ([^)]*)\)`)
		for _, m := range flags.FindAllStringSubmatch(stderr.String()+stdout.String(), -1) {
			out[m[1]] = m[2]
		}
		return out
	}
	serve, demo := defaults("serve"), defaults("demo")
	for _, name := range []string{"window", "quota", "algorithm", "dialect"} {
		if serve[name] != demo[name] || serve[name] == "" {
			t.Errorf("default -%s: serve %q, demo %q; want the same", name, serve[name], demo[name])
		}
	}
	if serve["window"] != "1s" {
		t.Errorf("serve's default -window = %q, want 1s", serve["window"])
	}
}

// serve stops at once on SIGINT or SIGTERM (its context), and exits 0,
// when a request is held: by -hang (negative, until the client gives up),
// -latency or -stream. Shutdown waited its whole grace, 5 s, for the held
// request, then failed with "context deadline exceeded".
func TestServeStopsAtOnceWithHeldRequest(t *testing.T) {
	for _, args := range [][]string{{"-hang", "-1s"}, {"-latency", "1m"}, {"-stream", "1m"}} {
		base, _, stop := startServe(t, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/x", nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		time.Sleep(100 * time.Millisecond) // the request is held
		start := time.Now()
		err := stop()
		if took := time.Since(start); took > time.Second || err != nil {
			t.Errorf("serve %v with a request held: stopped %v after its context ended, error %v; want at once, no error",
				args, took.Round(time.Millisecond), err)
		}
		cancel()
		<-done
	}
}

// -drip-bytes sets the length of the refusal bodies -drip sends,
// ratelimittest's Config.DripBytes. No flag gave it before: every dripping
// body was 65536 bytes, a client that read it whole held for 65536 drips.
func TestServeDripBytes(t *testing.T) {
	base, _, stop := startServe(t, "-addr", "127.0.0.1:0", "-quota", "1", "-window", "1m",
		"-drip", "1ns", "-drip-bytes", "300")
	defer stop()
	var lens []int
	for range 2 {
		resp, err := http.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		lens = append(lens, len(b))
		if resp.StatusCode == http.StatusTooManyRequests && (len(b) != 300 || !strings.HasSuffix(string(b), "\n\n")) {
			t.Errorf("refusal body: %d bytes ending %q, want 300, padded with newlines", len(b), b[max(0, len(b)-10):])
		}
	}
	if lens[1] != 300 {
		t.Errorf("body lengths %v, want the second, a refusal, of 300 bytes", lens)
	}
	if err := stop(); err != nil {
		t.Errorf("runServe after cancel = %v, want nil", err)
	}
}

// serve "prints each request's decision": a request admitted (and counted
// against the quota) whose client gave up during -latency was never
// printed, so that the log showed one admitted request, then a 429, for a
// quota of 2. It is printed with a dash for its status.
func TestServeLogsRequestNotAnswered(t *testing.T) {
	base, out, stop := startServe(t, "-addr", "127.0.0.1:0", "-quota", "2", "-window", "1m", "-latency", "500ms")
	defer stop()

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/gave-up", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	cancel()
	for _, p := range []string{"/second", "/third"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		t.Logf("GET %s: %s", p, resp.Status)
	}
	stop() // waits for the first request's handler, ended with its client
	log := out.String()
	if !strings.Contains(log, "/gave-up - (no answer)") {
		t.Errorf("serve log has no line for the admitted request whose client left, yet it spent the quota:\n%s", log)
	}
}

// A request held (-latency) when serve stops ends unanswered, as its help
// says, and as its log line says ("- (no answer)"): the handler returned
// without writing, and net/http answered for it with an implicit "200 OK"
// and an empty body, a success with no rate-limit fields.
func TestServeStopLeavesHeldUnanswered(t *testing.T) {
	base, out, stop := startServe(t, "-addr", "127.0.0.1:0", "-quota", "2", "-window", "1m", "-latency", "5s")
	defer stop()
	type result struct {
		status string
		body   string
		err    error
		rl     string
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.Get(base + "/held")
		if err != nil {
			done <- result{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- result{status: resp.Status, body: string(b), rl: resp.Header.Get("RateLimit")}
	}()
	time.Sleep(300 * time.Millisecond) // the request is held in -latency
	stop()
	r := <-done
	log := out.String()
	if strings.Contains(log, "/held - (no answer)") && r.err == nil {
		t.Errorf("serve logged %q, but the client got an answer: %s, body %q, RateLimit %q", "/held - (no answer)", r.status, r.body, r.rl)
	}
}
