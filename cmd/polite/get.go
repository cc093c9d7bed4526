package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/origin"
)

const getAbout = `
Get fetches each URL with GET through one polite Transport shared by -c
workers, so that every origin is paced by what it says about its rate
limits. URLs come from the arguments or, when there are none, from stdin,
one per line (blank lines and lines starting with # are skipped; the log
gives each URL's line number).

Bodies of 2xx responses go to stdout, each written whole (in completion
order, not input order), or with -o to files in a directory, named after
the URL's host and path with a short hash of the whole URL. Bodies of other
responses are discarded.

With -robots, each origin's robots.txt (RFC 9309) is fetched once and
obeyed for the product token of the User-Agent sent (-user-agent, or -H
'User-Agent: …'): a URL it disallows fails
without being sent, its Crawl-delay or Request-rate paces the origin, and
while it is unreachable (5xx) every URL of the origin fails until it is
fetched again (retry_at says when).

For every URL one JSON line goes to stderr, or appended to the -log file:
url (its user information and query elided, as "?…": they may hold a
credential; one without a scheme, which may be a word of an -H value left
unquoted, wholly, as "…"), line (its line number on stdin, when read from there), status, bytes (of the body written), attempts (requests sent on the
wire for this URL, retries, redirects and the robots.txt fetch it caused included), waited_s (time spent
waiting for the origin's budget, a wait an interrupt or -timeout cut short
included), reason (of the longest wait granted: pace, quota, retry-after,
backoff, adaptive, retry-budget, stopped, concurrency, probe, crawl-delay,
transient: polite.Reason's values; none for a wait cut short), error (when there was no
response, or the body could not be written), file (with -o) and retry_at
(when the URL failed because its origin refused it, or asked for a longer
wait than -max-wait or -timeout allow: when to try again, in UTC, rounded up
to the second). In every field, the value of an -H that may hold a
credential (see inspect's help) is shown as "…" wherever the server echoed
it (a number holding one, as the string "…"), and so is a value of the
URL's query of 6 bytes or more in the strings of the line. When stderr is a terminal, a progress bar shows the
count, the rate and an estimate of the time left that includes the pauses
the origins asked for (not when the bodies go to the same terminal).

The exit status is 1 if any URL failed: an error or a status outside 2xx.`

// defaultUserAgent is the User-Agent of get's requests unless -user-agent
// says otherwise.
const defaultUserAgent = "polite-get (github.com/politehttp/polite)"

// getRecord is the JSON line logged for one URL.
type getRecord struct {
	URL      string  `json:"url"`
	Line     int     `json:"line,omitempty"`
	Status   int     `json:"status"`
	Bytes    int64   `json:"bytes"`
	Attempts int     `json:"attempts"`
	WaitedS  float64 `json:"waited_s"`
	Reason   string  `json:"reason"`
	Error    string  `json:"error,omitempty"`
	File     string  `json:"file,omitempty"`
	RetryAt  string  `json:"retry_at,omitempty"`
}

// failed reports whether the URL of r failed: an error or a status outside 2xx.
func (r *getRecord) failed() bool {
	return r.Error != "" || r.Status/100 != 2
}

// tracker accumulates what happened to the requests of one URL. It travels
// in the requests' context, which the Transport's events and its Base see
// even when http.Client hands them a copy of the request (for a timeout or
// a redirect).
type tracker struct {
	mu      sync.Mutex
	sends   int
	waited  time.Duration
	longest time.Duration
	reason  polite.Reason
	retryAt time.Time // when the origin will take a request a give-up sent back
	// The Base's calls for the URL: how many are in flight, and when
	// the last returned. Time out of them, before the context ended,
	// was polite's (its waits; see fetch).
	inBase   int
	baseDone time.Time
}

type trackerKey struct{}

// trackerOf returns the tracker of r's context, or nil.
func trackerOf(r *http.Request) *tracker {
	if r == nil {
		return nil
	}
	t, _ := r.Context().Value(trackerKey{}).(*tracker)
	return t
}

// countSends is the Base of the get Transport: it counts each request sent
// on the wire against the tracker of its URL.
type countSends struct{ base *http.Transport }

// RoundTrip sends r with the base transport, and counts it against its
// tracker when its header has been written to a connection: the base
// transport fails some requests without sending them (an invalid header
// value), and resends one whose connection was found closed.
func (c countSends) RoundTrip(r *http.Request) (*http.Response, error) {
	t := trackerOf(r)
	if t == nil {
		return c.base.RoundTrip(r)
	}
	trace := &httptrace.ClientTrace{WroteHeaders: func() {
		t.mu.Lock()
		t.sends++
		t.mu.Unlock()
	}}
	t.mu.Lock()
	t.inBase++
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.inBase--
		t.baseDone = time.Now()
		t.mu.Unlock()
	}()
	return c.base.RoundTrip(r.WithContext(httptrace.WithClientTrace(r.Context(), trace)))
}

// CloseIdleConnections closes the idle connections of the base transport.
func (c countSends) CloseIdleConnections() { c.base.CloseIdleConnections() }

// getter fetches URLs and reports on them. It is safe for concurrent use.
type getter struct {
	client  *http.Client
	tr      *polite.Transport // under client: when a refused origin takes a request again
	headers headerFlag
	secrets []string // what the records elide where a server echoed it, of the headers (see headerFlag.secrets)
	timeout time.Duration
	maxWait time.Duration // -max-wait, 10 minutes for 0, as polite.Transport.MaxWait
	dir     string        // if not empty, bodies go to files here

	outMu sync.Mutex // serialises bodies written to out
	out   io.Writer

	logMu  sync.Mutex
	log    io.Writer // receives one JSON line per URL
	logErr error     // the first error writing to log

	stopMu  sync.Mutex
	stopped map[string]bool // origins that reported abnormal usage

	prog *getProgress

	userAgent string // of every request, unless -H sets another
}

// runGet implements "polite get", reading URLs from os.Stdin when the
// arguments give none.
func runGet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return getMain(ctx, args, os.Stdin, stdout, stderr)
}

// getMain is runGet with the standard input made explicit.
func getMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("get", "[flags] [URL...]", getAbout, stderr)
	workers := fs.Int("c", 4, "concurrent workers, at most one per URL")
	dir := fs.String("o", "", "write bodies to files in this directory instead of stdout")
	logFile := fs.String("log", "", "append the JSON lines to this file instead of stderr")
	var headers headerFlag
	fs.Var(&headers, "H", "request header 'Name: value' (repeatable); dropped, User-Agent aside, on a redirect to another origin (scheme, host or port)")
	timeout := fs.Duration("timeout", 0, "time limit per URL, waits included (0: none)")
	maxWait := fs.Duration("max-wait", 0, "longest wait for an origin honoured; a URL needing a longer one fails with retry_at (0: 10m)")
	maxAttempts := fs.Int("max-attempts", 0, "sends per request at most, counting the first (0: 8)")
	maxRate := fs.Float64("max-rate", 0, "most requests per second per origin, whatever the server says (0: no local limit)")
	userAgent := fs.String("user-agent", defaultUserAgent, "User-Agent of every request, unless -H sets one; with -robots, the product token (leading letters, - and _) of the User-Agent sent picks the robots.txt group")
	robots := fs.Bool("robots", false, "obey robots.txt (RFC 9309): a disallowed URL fails without being sent, and Crawl-delay paces its origin")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := headers.check(fs.Args()); err != nil {
		return err
	}
	switch {
	case *workers < 1:
		return usagef("-c must be at least 1, got %d", *workers)
	case *timeout < 0, *maxWait < 0:
		return usagef("-timeout and -max-wait must not be negative, got %v and %v", *timeout, *maxWait)
	case *maxAttempts < 0:
		return usagef("-max-attempts must not be negative, got %d", *maxAttempts)
	case !(*maxRate >= 0) || math.IsInf(*maxRate, 0):
		return usagef("-max-rate must be a number of requests a second, 0 or more, got %v", *maxRate)
	}
	var urls []input
	for _, u := range fs.Args() {
		urls = append(urls, input{url: u})
	}
	if len(urls) == 0 {
		var err error
		if urls, err = readURLsCtx(ctx, stdin); err != nil {
			return fmt.Errorf("reading URLs from stdin: %w", err)
		}
	}
	if len(urls) == 0 {
		return usagef("no URLs in the arguments or on stdin")
	}
	// A worker past the URLs would have nothing to do, and each costs
	// memory: -c 1000000 took 2.7 GB to fetch one URL.
	*workers = min(*workers, len(urls))
	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			return err
		}
	}

	live := newLiveLine(stderr)
	if *dir == "" && isTerminal(stdout) {
		live.on = false // the bodies would scroll the bar away
	}
	g := &getter{
		headers: headers,
		secrets: headers.secrets(),
		timeout: *timeout,
		maxWait: cmp.Or(*maxWait, 10*time.Minute),
		dir:     *dir,
		out:     stdout,
		log:     live,
		prog:    newGetProgress(len(urls)),
		stopped: map[string]bool{},
	}
	g.userAgent = *userAgent
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		g.log = f
	}

	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = max(*workers, 2)
	tr := &polite.Transport{
		Base:        countSends{base},
		MaxWait:     *maxWait,
		MaxAttempts: *maxAttempts,
		MaxRate:     *maxRate,
		OnEvent:     g.event,
	}
	if *robots {
		// The rules of the agent the site sees: -H may set another.
		agent := *userAgent
		if v, ok := headers.value("User-Agent"); ok {
			agent = v
		}
		tr.Robots = &polite.Robots{UserAgent: agent}
	}
	defer tr.CloseIdleConnections()
	g.client, g.tr = polite.NewClient(tr), tr
	g.client.CheckRedirect = headers.checkRedirect

	stop := every(ctx, live.on, 200*time.Millisecond, func() { live.draw(g.prog.line(time.Now())) })
	jobs := make(chan input)
	var wg sync.WaitGroup
	for range *workers {
		wg.Go(func() {
			for in := range jobs {
				rec := g.fetch(ctx, in.url)
				rec.Line = in.line
				g.prog.done(rec.failed())
				g.record(rec, in.url)
			}
		})
	}
feed:
	for _, in := range urls {
		select {
		case jobs <- in:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	stop()
	live.finish(g.prog.line(time.Now()))

	if err := ctx.Err(); err != nil {
		return err
	}
	if g.logErr != nil {
		return fmt.Errorf("writing the log: %w", g.logErr)
	}
	if n := g.prog.failures(); n > 0 {
		return fmt.Errorf("%d of %d URLs failed", n, len(urls))
	}
	return nil
}

// input is one URL to fetch.
type input struct {
	url  string
	line int // line number on stdin, from 1; 0 for an argument
}

// readURLsCtx is readURLs, returning ctx's error as soon as ctx ends: a
// terminal or a pipe whose writer is slow holds a read for as long as it
// likes, and SIGINT would wait for it. The read is then left behind, to
// end with stdin or the process.
func readURLsCtx(ctx context.Context, r io.Reader) ([]input, error) {
	type result struct {
		urls []input
		err  error
	}
	done := make(chan result, 1)
	go func() {
		urls, err := readURLs(r)
		done <- result{urls, err}
	}()
	select {
	case res := <-done:
		return res.urls, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readURLs reads one URL per line from r, skipping blank lines and lines
// that start with #.
func readURLs(r io.Reader) ([]input, error) {
	var urls []input
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		// A byte order mark, as Notepad writes, starts the first line,
		// and every file's first line of a list that joins them.
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		urls = append(urls, input{url: line, line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	return urls, nil
}

// record writes rec, the record of the URL target, to the log as one JSON
// line.
func (g *getter) record(rec getRecord, target string) {
	b, _ := json.Marshal(rec)
	b = jsonSafe(b)
	secrets, numeric := g.secrets, g.secrets
	if strings.ContainsAny(target, "@?#") {
		// Its userinfo's and its query's too, which only its own
		// server can echo: the records of a long list each elide what
		// they may hold.
		secrets, numeric = g.headers.secrets(target), g.headers.credentials(target)
	}
	if len(secrets) > 0 {
		b = elideJSON(b, secrets, numeric)
	}
	g.logMu.Lock()
	defer g.logMu.Unlock()
	if _, err := g.log.Write(append(b, '\n')); err != nil && g.logErr == nil {
		g.logErr = err
	}
}

// stopKey returns the origin of u, the unit get stops sending to when it
// reports abnormal usage, normalised as polite keys it: its scheme, and its
// host in lower case without the scheme's default port.
func stopKey(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	return scheme + "://" + origin.Normal(scheme, u.Host)
}

// event receives the Transport's events: waits are charged to their URL,
// retries tell the progress bar how long an origin pauses, and a stop ends
// the work for an origin.
func (g *getter) event(e polite.Event) {
	switch e.Kind {
	case polite.EventStop:
		if e.Request != nil {
			g.stopMu.Lock()
			g.stopped[stopKey(e.Request.URL)] = true
			g.stopMu.Unlock()
		}
	case polite.EventWait:
		if t := trackerOf(e.Request); t != nil {
			t.mu.Lock()
			t.waited += e.Wait
			if e.Wait > t.longest {
				t.longest, t.reason = e.Wait, e.Reason
			}
			t.mu.Unlock()
		}
	case polite.EventRetry:
		g.prog.pause(e.Time.Add(e.Wait), e.Reason, true)
	case polite.EventGiveUp:
		// The refusal goes back to the caller: its URL fails, and
		// retry_at says when the origin will take it.
		if e.Wait <= 0 {
			return
		}
		until := e.Time.Add(e.Wait)
		if t := trackerOf(e.Request); t != nil {
			t.mu.Lock()
			t.retryAt = until
			t.mu.Unlock()
		}
		// The other URLs of the origin wait for it when it is within
		// -max-wait (the URL's attempts were spent); longer, they fail.
		g.prog.pause(until, e.Reason, e.Wait <= g.maxWait)
	}
}

// fetch GETs u and writes its body, and returns the record to log.
func (g *getter) fetch(ctx context.Context, u string) (rec getRecord) {
	rec.URL = shownArg(u)
	if !hasScheme(u) {
		// Shown elided, with no error that quotes it: it may be a
		// credential (see shownArg).
		rec.Error = "not an http or https URL"
		return rec
	}
	parsed, err := url.Parse(u)
	if err != nil {
		rec.Error = shownText(err) // the log's JSON escapes what does not print
		return rec
	}
	if parsed.Scheme != "http" && parsed.Scheme != "https" || parsed.Hostname() == "" {
		rec.Error = "not an http or https URL"
		return rec
	}

	g.stopMu.Lock()
	stopped := g.stopped[stopKey(parsed)]
	g.stopMu.Unlock()
	if stopped {
		// The origin goes unnamed: rec.URL shows what of it may be shown (a
		// URL whose user information cannot be told from its host is
		// shown as its scheme alone, see shownURL).
		rec.Error = "not sent: its origin reported abnormal usage (RFC 9457 abnormal-usage-detected)"
		return rec
	}

	t := &tracker{}
	ctx = context.WithValue(ctx, trackerKey{}, t)
	if g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	defer func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		rec.Attempts = t.sends
		rec.WaitedS = round3(t.waited.Seconds())
		rec.Reason = string(t.reason)
		if rec.RetryAt == "" && !t.retryAt.IsZero() && rec.failed() {
			rec.RetryAt = formatRetryAt(t.retryAt)
		}
	}()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		rec.Error = shownText(err) // the log's JSON escapes what does not print
		return rec
	}
	req.Header.Set("User-Agent", g.userAgent)
	g.headers.apply(req.Header, &req.Host)
	start := time.Now()
	resp, err := g.client.Do(req)
	if err != nil {
		rec.Error = shownText(err) // the log's JSON escapes what does not print
		if ctx.Err() != nil {
			// Ended (an interrupt, -timeout) while polite held it:
			// out of the Base since its last call (or the start),
			// it spent that time waiting, which no event reports,
			// the wait granted never. (A wait granted is followed
			// by a call of the Base: none is counted twice.)
			t.mu.Lock()
			if t.inBase == 0 {
				t.waited += time.Since(later(start, t.baseDone))
			}
			t.mu.Unlock()
		}
		var (
			werr *polite.WaitError
			rerr *polite.RobotsError
		)
		if errors.As(err, &werr) {
			rec.Error = waitAdvice.Replace(rec.Error)
		}
		switch {
		case errors.As(err, &werr) && !werr.Until.IsZero(): // zero: no end known
			rec.RetryAt = formatRetryAt(werr.Until)
			g.prog.pause(werr.Until, werr.Reason, false)
		case errors.As(err, &rerr) && rerr.Unreachable:
			rec.RetryAt = formatRetryAt(rerr.Until) // robots.txt is fetched again then
		}
		return rec
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	if g.tr != nil {
		// A refusal returned: when its origin takes a request again, as
		// the Transport knows it (the server may have given no wait).
		if at, ok := g.tr.RetryAt(resp); ok {
			rec.RetryAt = formatRetryAt(at)
		}
	}
	if resp.StatusCode/100 != 2 {
		io.CopyN(io.Discard, resp.Body, 64<<10)
		return rec
	}
	if g.dir != "" {
		rec.File, rec.Bytes, err = saveBody(g.dir, parsed, resp.Body)
	} else {
		rec.Bytes, err = g.writeBody(resp.Body)
	}
	if err != nil {
		rec.Error = shownText(err) // the log's JSON escapes what does not print
	}
	return rec
}

// waitAdvice names, in the text of a *polite.WaitError, the flags of get
// that set what the text names for a program using polite: MaxWait is
// -max-wait, and the context's deadline -timeout's.
var waitAdvice = strings.NewReplacer(
	"exceeds MaxWait (", "exceeds -max-wait (",
	"raise Transport.MaxWait", "raise -max-wait",
	"before the request's context deadline", "before -timeout ends",
	"extend the context's deadline,", "raise -timeout,",
)

// formatRetryAt formats t in RFC 3339, in UTC, rounded up to the second:
// trying again at the instant written is never too early.
func formatRetryAt(t time.Time) string {
	return t.Add(time.Second - 1).Truncate(time.Second).UTC().Format(time.RFC3339)
}

// spoolMemory is how much of a body writeBody holds in memory before it
// spills the rest into a temporary file.
const spoolMemory = 8 << 20

// writeBody reads body whole, then writes it to g.out in one piece, so
// that bodies fetched at once do not interleave, and reports its size.
func (g *getter) writeBody(body io.Reader) (int64, error) {
	var buf bytes.Buffer
	n, err := io.CopyN(&buf, body, spoolMemory)
	var src io.Reader = &buf
	switch {
	case errors.Is(err, io.EOF):
	case err != nil:
		return 0, err
	default: // large: spill to disk
		f, err := os.CreateTemp("", "polite-get-*")
		if err != nil {
			return 0, err
		}
		defer os.Remove(f.Name())
		defer f.Close()
		m, err := io.Copy(f, io.MultiReader(&buf, body))
		if err != nil {
			return 0, err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return 0, err
		}
		n, src = m, f
	}
	g.outMu.Lock()
	defer g.outMu.Unlock()
	if _, err := io.Copy(g.out, src); err != nil {
		return 0, err
	}
	return n, nil
}

// saveBody writes body to a file in dir named by fileName(u), through a
// temporary file so that a failed download leaves nothing behind. It
// returns the file's path and size.
func saveBody(dir string, u *url.URL, body io.Reader) (string, int64, error) {
	f, err := createTemp(dir)
	if err != nil {
		return "", 0, err
	}
	n, err := io.Copy(f, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	name := filepath.Join(dir, fileName(u))
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, err
	}
	return name, n, nil
}

// fileName derives a safe file name from u: its host and path with every
// byte outside [A-Za-z0-9._-] replaced by '_', shortened, then a hash of
// the whole URL (so that URLs differing in query or in replaced bytes do not
// collide), then the path's extension, if it has a short safe one.
func fileName(u *url.URL) string {
	p := u.EscapedPath()
	ext := path.Ext(p)
	if len(ext) > 8 || safeName(ext) != ext {
		ext = ""
	}
	stem := safeName(u.Host + strings.TrimSuffix(p, ext))
	stem = strings.TrimRight(stem, "_")
	if len(stem) > 100 {
		stem = stem[:100]
	}
	sum := sha256.Sum256([]byte(u.String()))
	return stem + "-" + hex.EncodeToString(sum[:4]) + ext
}

// safeName replaces each byte of s outside [A-Za-z0-9._-] with '_'.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-':
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

// getProgress counts the URLs done and the pauses origins asked for, for
// the progress bar. It is safe for concurrent use.
type getProgress struct {
	mu     sync.Mutex
	start  time.Time
	total  int
	n      int // done
	failed int
	// The pause asked for that ends last, whatever its origin: the
	// longest in progress, all the line shows. Kept by origin, the pauses
	// were dropped only as the line was drawn, and off a terminal, where
	// it never is, every origin refused during a run stayed kept. waited
	// is the end of the last that URLs wait for, which bounds the time
	// left; a pause longer than -max-wait, whose URL failed, holds no URL:
	// taken as a bound, an hour's made the estimate an hour for a run
	// that ended in 3 s.
	until  time.Time
	reason polite.Reason
	waited time.Time
}

// newGetProgress returns a getProgress for total URLs, starting now.
func newGetProgress(total int) *getProgress {
	return &getProgress{start: time.Now(), total: total}
}

// done counts one URL done.
func (p *getProgress) done(failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if failed {
		p.failed++
	}
}

// failures reports how many URLs failed.
func (p *getProgress) failures() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// pause records that an origin sends nothing until until, for reason,
// and whether URLs wait for it.
func (p *getProgress) pause(until time.Time, reason polite.Reason, waited bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until.After(p.until) {
		p.until, p.reason = until, reason
	}
	if waited && until.After(p.waited) {
		p.waited = until
	}
}

// line draws the progress bar at now: done/total, rate, failures, the
// longest pause in progress, and the estimated time left.
//
// The estimate is the larger of two bounds: the URLs left at the mean rate
// so far (which already reflects the origins' pacing), and the longest pause
// URLs wait for that is still running, since they cannot finish before
// it ends.
func (p *getProgress) line(now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	const width = 24
	filled := width * p.n / max(p.total, 1)
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	if filled < width && p.n > 0 {
		bar = bar[:filled] + ">" + bar[filled+1:]
	}
	elapsed := now.Sub(p.start)
	rate := float64(p.n) / max(elapsed.Seconds(), 1e-3)
	s := fmt.Sprintf("[%s] %d/%d  %.1f/s", bar, p.n, p.total, rate)

	longest, why := max(p.until.Sub(now), 0), p.reason
	if left := p.total - p.n; left > 0 {
		eta := max(p.waited.Sub(now), 0)
		if p.n > 0 {
			eta = max(eta, time.Duration(float64(left)/rate*float64(time.Second)))
		}
		if eta > 0 {
			s += "  ETA " + eta.Round(time.Second).String()
		} else {
			s += "  ETA ?"
		}
	} else {
		s += "  in " + elapsed.Round(100*time.Millisecond).String()
	}
	if p.failed > 0 {
		s += fmt.Sprintf("  %d failed", p.failed)
	}
	if longest > 0 {
		s += fmt.Sprintf("  paused %s (%s)", seconds(longest), why)
	}
	return s
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// createTemp creates a new file in dir for saveBody to rename, as
// os.CreateTemp does but with mode 0666 before the umask, as a file
// created otherwise has: os.CreateTemp's 0600 made every file saved
// readable by its owner alone.
func createTemp(dir string) (*os.File, error) {
	for {
		name := filepath.Join(dir, ".polite-get-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}
