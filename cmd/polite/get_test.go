package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// getRecords decodes the JSON lines of get's log.
func getRecords(t *testing.T, log string) map[string]getRecord {
	t.Helper()
	recs := map[string]getRecord{}
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var r getRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		if _, dup := recs[r.URL]; dup {
			t.Errorf("URL %s logged twice", r.URL)
		}
		recs[r.URL] = r
	}
	return recs
}

// TestGetManyURLs fetches 200 URLs of one origin whose draft-11 quota is
// generous but binding (100 per second): polite must pace them so that the
// server refuses none.
func TestGetManyURLs(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 100, Window: time.Second}},
		Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "<%s>\n", r.URL.Path)
		}),
	})
	defer srv.Close()

	const n = 200
	args := []string{"-c", "8"}
	for i := range n {
		args = append(args, fmt.Sprintf("%s/item/%d", srv.URL, i))
	}
	var stdout, stderr bytes.Buffer
	start := time.Now()
	if err := runGet(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("runGet = %v; stderr:\n%s", err, stderr.String())
	}
	t.Logf("%d URLs in %v; server stats %+v", n, time.Since(start), srv.Handler.Stats().Status)

	recs := getRecords(t, stderr.String())
	if len(recs) != n {
		t.Fatalf("logged %d URLs, want %d", len(recs), n)
	}
	for i := range n {
		u := fmt.Sprintf("%s/item/%d", srv.URL, i)
		r, ok := recs[u]
		if !ok {
			t.Errorf("%s not logged", u)
			continue
		}
		body := fmt.Sprintf("</item/%d>\n", i)
		if r.Status != 200 || r.Attempts != 1 || r.Error != "" || r.Bytes != int64(len(body)) {
			t.Errorf("%s: status %d, attempts %d, bytes %d, error %q; want 200, 1, %d, none",
				u, r.Status, r.Attempts, r.Bytes, r.Error, len(body))
		}
		// Each body is written whole: its line appears intact.
		if !strings.Contains(stdout.String(), body) {
			t.Errorf("stdout lacks the body of %s", u)
		}
	}
	if got, want := stdout.Len(), len(strings.Join(strings.Fields(stdout.String()), "\n"))+1; got != want {
		t.Errorf("stdout has %d bytes, want %d: bodies interleaved or repeated", got, want)
	}
	if st := srv.Handler.Stats(); st.Refused != 0 || st.Requests != n {
		t.Errorf("server saw %d requests and refused %d, want %d and 0", st.Requests, st.Refused, n)
	}
}

func TestGetStdinAndDir(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 100, Window: time.Second}},
		Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/missing" {
				http.NotFound(w, r)
				return
			}
			fmt.Fprint(w, r.URL.RequestURI())
		}),
	})
	defer srv.Close()

	dir := filepath.Join(t.TempDir(), "out")
	logFile := filepath.Join(t.TempDir(), "get.log")
	urls := []string{
		srv.URL + "/a/b.json",
		srv.URL + "/a/b.json?page=2", // same path, another file
		srv.URL + "/a%2Fb.json",      // same file name once escaped, another file
		srv.URL + "/",
		srv.URL + "/missing",
		"ftp://127.0.0.1/file",
	}
	stdin := strings.NewReader("# URLs to fetch\n\n" + strings.Join(urls, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	err := getMain(t.Context(), []string{"-o", dir, "-log", logFile, "-c", "3"}, stdin, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "2 of 6 URLs failed") {
		t.Errorf("getMain = %v, want 2 of 6 URLs failed", err)
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("stdout %q, stderr %q; want both empty with -o and -log", stdout.String(), stderr.String())
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	recs := getRecords(t, string(log))
	files := map[string]bool{}
	for _, u := range urls[:4] {
		r := recs[shownURL(u)]
		if r.Status != 200 || r.File == "" || r.Error != "" {
			t.Errorf("%s: status %d, file %q, error %q; want 200, a file, no error", u, r.Status, r.File, r.Error)
			continue
		}
		if filepath.Dir(r.File) != dir {
			t.Errorf("%s saved as %s, outside %s", u, r.File, dir)
		}
		files[r.File] = true
		parsed, _ := url.Parse(u)
		if b, err := os.ReadFile(r.File); err != nil || string(b) != parsed.RequestURI() {
			t.Errorf("%s: file %s holds %q (%v), want %q", u, r.File, b, err, parsed.RequestURI())
		}
	}
	if len(files) != 4 {
		t.Errorf("4 URLs saved to %d distinct files: %v", len(files), files)
	}
	if r := recs[srv.URL+"/missing"]; r.Status != 404 || r.File != "" || r.Bytes != 0 {
		t.Errorf("/missing: status %d, file %q, bytes %d; want 404, no file, 0", r.Status, r.File, r.Bytes)
	}
	if r := recs["ftp://127.0.0.1/file"]; r.Error == "" || r.Attempts != 0 {
		t.Errorf("ftp URL: error %q, attempts %d; want an error and 0", r.Error, r.Attempts)
	}
	if strings.Contains(string(log), "page=2") {
		t.Errorf("the log shows a URL's query: %s", log)
	}
	for i, u := range urls {
		// Lines 1 and 2 are a comment and a blank line.
		if r := recs[shownURL(u)]; r.Line != i+3 {
			t.Errorf("%s: line %d, want %d", u, r.Line, i+3)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("%s holds %d entries, want the 4 bodies and no temporary files", dir, len(entries))
	}
}

// TestGetRetryCounted checks attempts, waits and reasons when the server
// refuses: it says nothing about its limits until the first refusal, which
// asks for a one-second wait.
func TestGetRetryCounted(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Dialect:  ratelimittest.RetryAfterOnly,
		Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Second}},
	})
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"-c", "2", srv.URL + "/1", srv.URL + "/2"}
	if err := runGet(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("runGet = %v; stderr:\n%s", err, stderr.String())
	}
	recs := getRecords(t, stderr.String())
	attempts, waited := 0, 0.0
	for _, r := range recs {
		if r.Status != 200 {
			t.Errorf("%s: status %d, want 200", r.URL, r.Status)
		}
		attempts += r.Attempts
		waited += r.WaitedS
	}
	st := srv.Handler.Stats()
	if attempts != st.Requests {
		t.Errorf("attempts add up to %d, server saw %d requests", attempts, st.Requests)
	}
	if st.Refused > 0 && waited < 0.9 {
		t.Errorf("server refused %d requests but waits add up to %vs, want about 1s or more", st.Refused, waited)
	}
}

func TestGetWaitTooLong(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Hour}},
	})
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"-c", "1", "-max-wait", "1s", srv.URL + "/1", srv.URL + "/2"}
	err := runGet(t.Context(), args, &stdout, &stderr)
	if err == nil {
		t.Fatalf("runGet = nil, want an error: the second URL needs an hour")
	}
	recs := getRecords(t, stderr.String())
	if r := recs[srv.URL+"/1"]; r.Status != 200 {
		t.Errorf("/1: status %d, want 200", r.Status)
	}
	r := recs[srv.URL+"/2"]
	if r.Error == "" || r.RetryAt == "" || r.Status != 0 {
		t.Fatalf("/2: status %d, error %q, retry_at %q; want 0, an error, a time", r.Status, r.Error, r.RetryAt)
	}
	at, err := time.Parse(time.RFC3339, r.RetryAt)
	if err != nil || time.Until(at) < 50*time.Minute {
		t.Errorf("/2: retry_at %q (%v), want about an hour from now", r.RetryAt, err)
	}
}

// A refusal that asks for a longer wait than -max-wait goes back to the
// caller as the 429 it is; its URL carries retry_at, as the URLs after it
// (refused locally) do.
func TestGetRetryAtOfRefusal(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Dialect:  ratelimittest.RetryAfterOnly,
		Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Hour}},
	})
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"-c", "1", srv.URL + "/1", srv.URL + "/2", srv.URL + "/3"}
	if err := runGet(t.Context(), args, &stdout, &stderr); err == nil {
		t.Fatalf("runGet = nil, want an error: /2 and /3 need an hour")
	}
	recs := getRecords(t, stderr.String())
	if r := recs[srv.URL+"/1"]; r.Status != 200 || r.RetryAt != "" {
		t.Errorf("/1: status %d, retry_at %q; want 200 and none", r.Status, r.RetryAt)
	}
	r2, r3 := recs[srv.URL+"/2"], recs[srv.URL+"/3"]
	if r2.Status != http.StatusTooManyRequests || r2.Attempts != 1 {
		t.Errorf("/2: status %d, attempts %d; want 429 and 1", r2.Status, r2.Attempts)
	}
	if r3.Status != 0 || r3.Error == "" || r3.Attempts != 0 {
		t.Errorf("/3: status %d, error %q, attempts %d; want 0, a WaitError, 0", r3.Status, r3.Error, r3.Attempts)
	}
	at2, err2 := time.Parse(time.RFC3339, r2.RetryAt)
	at3, err3 := time.Parse(time.RFC3339, r3.RetryAt)
	if err2 != nil || err3 != nil {
		t.Fatalf("retry_at of /2 %q (%v), of /3 %q (%v); want two times", r2.RetryAt, err2, r3.RetryAt, err3)
	}
	if d := time.Until(at2); d < 59*time.Minute || d > 62*time.Minute {
		t.Errorf("/2: retry_at %s is %v from now, want about an hour", r2.RetryAt, d)
	}
	if d := at3.Sub(at2); d < 0 || d > 10*time.Second {
		t.Errorf("/2 retry_at %s, /3 retry_at %s: want the same instant, or /3 a little later (jitter)", r2.RetryAt, r3.RetryAt)
	}
}

func TestFormatRetryAt(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	for _, tt := range []struct {
		in   time.Time
		want string
	}{
		{base, "2026-01-02T02:04:05Z"},
		{base.Add(time.Nanosecond), "2026-01-02T02:04:06Z"},
		{base.Add(999 * time.Millisecond), "2026-01-02T02:04:06Z"},
	} {
		if got := formatRetryAt(tt.in); got != tt.want {
			t.Errorf("formatRetryAt(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestFileName(t *testing.T) {
	tests := []struct {
		url, prefix, suffix string
	}{
		{"http://127.0.0.1:8080/", "127.0.0.1_8080-", ""},
		{"https://example.com/a/b/index.html?x=1", "example.com_a_b_index-", ".html"},
		{"https://example.com/../../etc/passwd", "example.com_.._.._etc_passwd-", ""},
		{"https://example.com/%2e%2e/x y", "example.com_.._x_20y-", ""},
		{"https://example.com/" + strings.Repeat("a", 300), "example.com_" + strings.Repeat("a", 88) + "-", ""},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		got := fileName(u)
		if !strings.HasPrefix(got, tt.prefix) || !strings.HasSuffix(got, tt.suffix) ||
			len(got) != len(tt.prefix)+8+len(tt.suffix) || strings.ContainsAny(got, "/\\: ") {
			t.Errorf("fileName(%q) = %q, want %q + 8 hex digits + %q", tt.url, got, tt.prefix, tt.suffix)
		}
	}
}

func TestGetProgressLine(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &getProgress{start: start, total: 100}
	for range 25 {
		p.done(false)
	}
	now := start.Add(5 * time.Second) // 5/s: 75 left take 15s
	if got, want := p.line(now), "ETA 15s"; !strings.Contains(got, want) {
		t.Errorf("line = %q, want it to contain %q", got, want)
	}
	// A pause whose URL failed (an hour, past -max-wait): shown, but no
	// URL waits for it, and the estimate stays the rate's. (Taken as a
	// bound, it made the estimate an hour for a run that ended in 3 s.)
	p.pause(now.Add(time.Hour), "retry-after", false)
	if got, want := p.line(now), "ETA 15s"; !strings.Contains(got, want) || !strings.Contains(got, "paused 3600.0s (retry-after)") {
		t.Errorf("with a pause of a URL that failed, line = %q, want it to contain %q and the pause", got, want)
	}
	p = &getProgress{start: start, total: 100, n: 25}
	p.pause(now.Add(40*time.Second), "retry-after", true)
	if got, want := p.line(now), "ETA 40s"; !strings.Contains(got, want) || !strings.Contains(got, "paused 40.0s (retry-after)") {
		t.Errorf("with a 40s pause a retry waits for, line = %q, want it to contain %q and the pause", got, want)
	}
	if got := p.line(now.Add(41 * time.Second)); strings.Contains(got, "paused") {
		t.Errorf("after the pause, line = %q, want no pause", got)
	}
}

// A server that is not rate-limited at all: get still works, with one
// attempt per URL and no waits except the first request's probe.
func TestGetPlainServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	if err := runGet(t.Context(), []string{srv.URL + "/1", srv.URL + "/2", srv.URL + "/3"}, &stdout, &stderr); err != nil {
		t.Fatalf("runGet = %v; stderr:\n%s", err, stderr.String())
	}
	if stdout.String() != "okokok" {
		t.Errorf("stdout = %q, want okokok", stdout.String())
	}
	for u, r := range getRecords(t, stderr.String()) {
		if r.Status != 200 || r.Attempts != 1 || r.Bytes != 2 {
			t.Errorf("%s: %+v, want status 200, 1 attempt, 2 bytes", u, r)
		}
	}
}

// TestGetStopsOrigin checks that after an origin reports abnormal usage
// (polite.EventStop), get sends it nothing more.
func TestGetStopsOrigin(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
	}))
	defer srv.Close()
	g := &getter{client: srv.Client(), out: io.Discard, stopped: map[string]bool{}}
	req := httptest.NewRequest(http.MethodGet, srv.URL+"/1", nil)
	g.event(polite.Event{Kind: polite.EventStop, Request: req})
	rec := g.fetch(t.Context(), srv.URL+"/2")
	if rec.Error == "" || rec.Attempts != 0 || hits.Load() != 0 {
		t.Errorf("after a stop: error %q, attempts %d, server hits %d; want an error, 0, 0", rec.Error, rec.Attempts, hits.Load())
	}
}

// TestGetStream fetches URLs from a server that streams each body as
// server-sent events and serves two streams at once: every body arrives
// whole, and the server refuses nothing, since polite counts a request in
// flight until its body ends.
func TestGetStream(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Name: "streams", Algorithm: ratelimittest.Concurrency, Quota: 2}},
		Stream:   200 * time.Millisecond,
	})
	defer srv.Close()
	const n = 6
	args := []string{"-c", "6"}
	for i := range n {
		args = append(args, fmt.Sprintf("%s/s/%d", srv.URL, i))
	}
	var stdout, stderr bytes.Buffer
	if err := runGet(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("runGet = %v; stderr:\n%s", err, stderr.String())
	}
	recs := getRecords(t, stderr.String())
	if len(recs) != n {
		t.Fatalf("logged %d URLs, want %d", len(recs), n)
	}
	var total int64
	for u, r := range recs {
		if r.Status != 200 || r.Attempts != 1 || r.Error != "" || r.Bytes == 0 {
			t.Errorf("%s: status %d, attempts %d, bytes %d, error %q; want 200, 1, some, none", u, r.Status, r.Attempts, r.Bytes, r.Error)
		}
		total += r.Bytes
	}
	if int64(stdout.Len()) != total || strings.Count(stdout.String(), "data: ") != 10*n {
		t.Errorf("stdout has %d bytes and %d events, want %d bytes and %d events", stdout.Len(), strings.Count(stdout.String(), "data: "), total, 10*n)
	}
	if st := srv.Handler.Stats(); st.Refused != 0 || st.PeakInFlight > 2 {
		t.Errorf("server refused %d and served %d streams at once, want 0 and at most 2", st.Refused, st.PeakInFlight)
	}
}

// A refusal with no Retry-After that goes back to the caller gets a
// retry_at, from Transport.RetryAt: it had none, since the give-up event
// carries only the wait the server asked for.
func TestGetRetryAtOfBareRefusal(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Hour}},
		Dialect:  ratelimittest.Bare429,
	})
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	err := runGet(t.Context(), []string{"-max-attempts", "1", "-c", "1", srv.URL + "/1", srv.URL + "/2"}, &stdout, &stderr)
	if err == nil {
		t.Fatalf("runGet = nil, want a failure; log:\n%s", stderr.String())
	}
	recs := getRecords(t, stderr.String())
	r, ok := recs[srv.URL+"/2"]
	if !ok {
		t.Fatalf("/2 not logged:\n%s", stderr.String())
	}
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("/2: status %d, want 429; log:\n%s", r.Status, stderr.String())
	}
	if r.RetryAt == "" {
		t.Errorf("/2 failed because its origin refused it (429), but its record has no retry_at: %+v", r)
	}
}

// A URL whose wait has no known end (behind the origin's probe, still
// unanswered) fails with a *WaitError whose Until is zero: its record has
// no retry_at. It said to try again in the year 1.
func TestGetRetryAtOfWaitWithNoEnd(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Second)
	}))
	defer srv.Close()
	// Both URLs in one run: the second waits for the first.
	var out, log bytes.Buffer
	runGet(t.Context(), []string{"-c", "2", "-max-wait", "500ms", srv.URL + "/a", srv.URL + "/b"}, &out, &log)
	recs := getRecords(t, log.String())
	for u, r := range recs {
		if r.RetryAt == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339, r.RetryAt)
		if err != nil || at.Before(time.Now().Add(-time.Minute)) {
			t.Errorf("%s: retry_at %q is not a time to try again; record %+v", u, r.RetryAt, r)
		}
	}
}

// SIGINT and SIGTERM (main's context) stop get while it reads URLs from
// stdin: a terminal, or a pipe whose writer is slow. It read to the end of
// stdin before it looked at its context, and only SIGKILL stopped it.
func TestGetStdinStopsWhenCancelled(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(t.Context())
	var stdout, stderr syncBuffer
	errc := make(chan error, 1)
	go func() { errc <- getMain(ctx, nil, pr, &stdout, &stderr) }()
	time.Sleep(50 * time.Millisecond) // reading stdin
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("getMain after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Errorf("get still reading stdin 2s after its context ended")
		pw.Close() // release it
		<-errc
	}
}

// get starts at most one worker per URL: it started -c whatever the
// number of URLs, and "get -c 1000000 URL" took 15.6 s and 2.7 GB to
// fetch one URL.
func TestGetWorkersBoundedByURLs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	var err error
	n := extraGoroutines(func() {
		err = getMain(t.Context(), []string{"-c", "5000", srv.URL + "/one", srv.URL + "/two"}, strings.NewReader(""), &stdout, &stderr)
	})
	if err != nil {
		t.Fatalf("get: %v\n%s", err, stderr.String())
	}
	if n > 100 {
		t.Errorf("fetching 2 URLs with -c 5000: %d goroutines more; want about as many workers as URLs", n)
	}
}

// attempts count the requests sent on the wire (get's help): one the base
// transport fails without sending it (an invalid header value, here from
// -user-agent) was counted, as countSends counted before sending.
func TestGetAttemptsCountOnlySent(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	for _, ua := range []string{"a\nb", "polite-test"} {
		stderr.Reset()
		hits.Store(0)
		getMain(t.Context(), []string{"-user-agent", ua, srv.URL + "/"}, strings.NewReader(""), &stdout, &stderr)
		recs := getRecords(t, stderr.String())
		if r, ok := recs[srv.URL+"/"]; !ok || int64(r.Attempts) != hits.Load() {
			t.Errorf("-user-agent %q: attempts %d, but the server saw %d requests (error %q)", ua, r.Attempts, hits.Load(), r.Error)
		}
	}
}

// A URL list saved with a UTF-8 byte order mark (as Notepad saves it)
// fetches its first URL like the others, and so does a list of such files
// joined (cat a.txt b.txt): get read the mark as part of the URL and
// failed it as "not an http or https URL".
func TestGetListByteOrderMark(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	stdin := strings.NewReader("\ufeff" + srv.URL + "/a\r\n\ufeff" + srv.URL + "/b\r\n")
	var stdout, stderr bytes.Buffer
	err := getMain(t.Context(), nil, stdin, &stdout, &stderr)
	if err != nil {
		t.Errorf("get of a BOM-prefixed list = %v, want nil; log:\n%s", err, stderr.String())
	}
	if got := stdout.String(); got != "okok" {
		t.Errorf("bodies = %q, want %q", got, "okok")
	}
}

// A URL whose host is empty but for a port ("http://:PORT/", as
// "http://$HOST:8080/" reads with HOST unset) is no "http or https URL
// with a host", as inspect's error and get's check say; both sent it, to
// the local machine, and reported on whatever listened there. (curl
// rejects it: "No host part in the URL".)
func TestNoHostNotSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("local"))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	u := "http://:" + port + "/x"

	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"inspect", u}, &stdout, &stderr)
	if code != 2 {
		t.Errorf("inspect %s: exit %d, want 2 (no host); stdout:\n%s", u, code, stdout.String())
	}
	stdout.Reset()
	stderr.Reset()
	getMain(t.Context(), []string{u}, strings.NewReader(""), &stdout, &stderr)
	if rec := getRecords(t, stderr.String())[u]; rec.Error == "" {
		t.Errorf("get %s: status %d, no error; want it refused as no http URL with a host", u, rec.Status)
	}
	if n := hits.Load(); n > 0 {
		t.Errorf("%d requests for a URL with no host reached the local machine", n)
	}
}

// get -o created its directory 0755 (less the umask), but every body file
// 0600 whatever the umask, the os.CreateTemp file renamed: other users (a
// web server serving the mirror, a group sharing it) could not read what
// was downloaded, unlike a file curl -o, wget or os.Create writes.
func TestGetFileModeFollowsUmask(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("body"))
	}))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	if err := runGet(t.Context(), []string{"-o", dir, srv.URL + "/a.txt"}, &stdout, &stderr); err != nil {
		t.Fatalf("get: %v\n%s", err, stderr.String())
	}
	rec := getRecords(t, stderr.String())[srv.URL+"/a.txt"]
	fi, err := os.Stat(rec.File)
	if err != nil {
		t.Fatal(err)
	}
	// What a plain os.Create in the same directory gets under this umask.
	ref, err := os.Create(filepath.Join(dir, "reference"))
	if err != nil {
		t.Fatal(err)
	}
	ref.Close()
	want, _ := os.Stat(ref.Name())
	if fi.Mode().Perm() != want.Mode().Perm() {
		t.Errorf("%s has mode %v, want %v as a file created under this umask", rec.File, fi.Mode().Perm(), want.Mode().Perm())
	}
}

// A give-up's pause bounds the estimate when the origin's other URLs wait
// for it (within -max-wait: the URL's attempts were spent), and not when
// it is longer (they fail too).
func TestGetProgressGiveUpPause(t *testing.T) {
	start := time.Now()
	for _, c := range []struct {
		wait time.Duration
		want string
	}{
		{3 * time.Second, "ETA 3s"},
		{time.Hour, "ETA 0s"},
	} {
		g := &getter{maxWait: 10 * time.Minute, prog: &getProgress{start: start, total: 3}}
		g.prog.done(true)
		g.event(polite.Event{Kind: polite.EventGiveUp, Time: start, Wait: c.wait, Reason: polite.ReasonRetryAfter})
		if got := g.prog.line(start.Add(time.Millisecond)); !strings.Contains(got, c.want) {
			t.Errorf("a give-up asking %v: line = %q, want it to contain %q", c.wait, got, c.want)
		}
	}
}
