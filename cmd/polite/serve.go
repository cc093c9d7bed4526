package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

const serveAbout = `
Serve runs a rate-limited HTTP server (package ratelimittest) with one
policy, and prints each request's decision on stdout: time, method, path,
status, and the rate-limit fields of the response ("- (no answer)" for a
request whose client left, or that serve stopped, before its answer; a
client that sends a body larger than 256 KiB, or waits for 100 Continue,
is seen to leave only once its answer is written, for its body is left
unread, as net/http leaves it); a line is printed when its response ends. Every path is served alike. It
listens on a loopback address unless -public is given, and stops on
SIGINT or SIGTERM.

The faults make the server misbehave on purpose, to see how clients cope:
-malformed sends syntactically broken fields, -retry-after replaces every
Retry-After, -inflate advertises a larger quota than the one enforced, -age
marks every response as cached, -maintenance-start/-end answer 503 for a
span, -problem explains refusals with an RFC 9457 problem document.
-retry-after-zero sends "Retry-After: 0" on every refusal, -no-retry-after
sends none (the fields alone say when), -round-down
rounds the resets sent as instants down to the second, -utc-dates ends
HTTP-dates in UTC, -phase starts the windows before the server, -drip
sends refusal bodies (-drip-bytes long) a byte at a time, -hang holds the
first -hang-requests requests before serving them, -stream streams
admitted bodies as server-sent events. A request held (-hang, -latency,
-drip, -stream) ends at once, unanswered or cut, when serve stops.`

// runServe implements "polite serve".
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "[flags]", serveAbout, stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	public := fs.Bool("public", false, "allow an address that is not loopback")
	var pf policyFlags
	pf.register(fs, 10, time.Second)
	latency := fs.Duration("latency", 0, "time taken to serve an admitted request")
	bodySize := fs.Int("body-size", 0, "size of the body of admitted requests in bytes, at most 64 MiB (0: 2 bytes)")
	refuse := fs.Int("refuse-status", http.StatusTooManyRequests, "status code of refusals")
	malformed := fs.Bool("malformed", false, "fault: send malformed rate-limit fields")
	retryAfter := fs.Duration("retry-after", 0, "fault: send this Retry-After on every refusal instead of the honest one")
	inflate := fs.Int64("inflate", 0, "fault: advertise a quota this many times the one enforced; that quota at most 999999999999999, as -quota, and for a leaky-bucket, the -burst plus one plus -quota times (-inflate less one) at most that")
	age := fs.Duration("age", 0, "fault: add this Age to every response, as if from a cache")
	mStart := fs.Duration("maintenance-start", 0, "fault: start of a maintenance span (503), from server start")
	mEnd := fs.Duration("maintenance-end", 0, "fault: end of the maintenance span, from server start")
	problem := fs.Bool("problem", false, "explain refusals with an RFC 9457 problem document")
	retryAfterZero := fs.Bool("retry-after-zero", false, "fault: send \"Retry-After: 0\" on every refusal")
	noRetryAfter := fs.Bool("no-retry-after", false, "fault: send no Retry-After on refusals, as ulule/limiter does")
	roundDown := fs.Bool("round-down", false, "fault: round the resets sent as instants (epoch seconds, HTTP-dates) down to the second, not up")
	utcDates := fs.Bool("utc-dates", false, "fault: end the HTTP-dates of the rate-limit fields and Retry-After in UTC, not GMT")
	phase := fs.Duration("phase", 0, "start the windows this long before the server, so that they end between whole seconds")
	drip := fs.Duration("drip", 0, "fault: send refusal bodies one byte every this long")
	dripBytes := fs.Int("drip-bytes", 65536, "the length of a refusal body -drip sends, padded with newlines, at most 64 MiB")
	hang := fs.Duration("hang", 0, "fault: hold each of the first -hang-requests requests this long before serving it; negative (-1s): until the client gives up")
	hangRequests := fs.Int("hang-requests", 1, "how many requests -hang holds")
	stream := fs.Duration("stream", 0, "stream admitted bodies as server-sent events over this long")
	streamEvents := fs.Int("stream-events", 10, "the number of events of a streamed body; all of them 64 MiB at most, each -body-size plus 8 bytes")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %s", shownArgs(fs.Args()))
	}
	cfg, err := pf.config()
	if err != nil {
		return err
	}
	if *refuse < 400 || *refuse > 599 {
		return usagef("-refuse-status %d is not an error status (400 to 599)", *refuse)
	}
	if *inflate < 0 || *latency < 0 || *bodySize < 0 || *retryAfter < 0 || *age < 0 ||
		*phase < 0 || *drip < 0 || *stream < 0 {
		return usagef("-inflate, -latency, -body-size, -retry-after, -age, -phase, -drip and -stream must not be negative")
	}
	if *inflate > 1 && pf.quota > maxSFInteger / *inflate {
		// The quota advertised, and what remains of it, must fit a
		// Structured Fields Integer, as -quota does.
		return usagef("-quota %d times -inflate %d is more than %d (15 digits, as a Structured Fields Integer)", pf.quota, *inflate, int64(maxSFInteger))
	}
	if *inflate > 1 && ratelimittest.Algorithm(pf.algorithm) == ratelimittest.LeakyBucket && pf.burst+1 > maxSFInteger-pf.quota*(*inflate-1) {
		// What remains is advertised with Quota*(Inflate-1) added, and a
		// leaky bucket's remaining counts its burst and one more.
		return usagef("-burst %d plus one, plus -quota %d times (-inflate %d less one), is more than %d (15 digits, as a Structured Fields Integer)", pf.burst, pf.quota, *inflate, int64(maxSFInteger))
	}
	if *bodySize > maxBodySize {
		// Each body is made whole for each request: a size past memory
		// killed the server at its first answer.
		return usagef("-body-size %d is more than %d (64 MiB)", *bodySize, maxBodySize)
	}
	if n := btoi(*retryAfter > 0) + btoi(*retryAfterZero) + btoi(*noRetryAfter); n > 1 {
		return usagef("-retry-after, -retry-after-zero and -no-retry-after exclude each other")
	}
	if *hangRequests < 1 || *streamEvents < 1 || *dripBytes < 1 {
		return usagef("-hang-requests, -stream-events and -drip-bytes must be at least 1")
	}
	if event := streamEventSize(*bodySize); *stream > 0 && *streamEvents > maxBodySize/event {
		// Events due faster than they can be written go back to back:
		// a streamed body is bounded as a whole body is, or it ran far
		// past -stream, for as long as the client read (9e18 events).
		return usagef("-stream-events %d of %d bytes each (-body-size and the event's framing) is more than %d (64 MiB)", *streamEvents, event, maxBodySize)
	}
	if *dripBytes > maxBodySize {
		// Each dripping body is made whole for each refusal, as a body
		// of -body-size is.
		return usagef("-drip-bytes %d is more than %d (64 MiB)", *dripBytes, maxBodySize)
	}
	if *mEnd < *mStart {
		return usagef("-maintenance-end %v is before -maintenance-start %v", *mEnd, *mStart)
	}
	if *mStart < 0 || *mEnd < 0 {
		// From server start: a span before it was taken and did nothing.
		return usagef("-maintenance-start %v and -maintenance-end %v must not be negative", *mStart, *mEnd)
	}
	cfg.Latency = *latency
	cfg.BodySize = *bodySize
	cfg.RefuseStatus = *refuse
	cfg.Malformed = *malformed
	cfg.RetryAfter = *retryAfter
	cfg.Inflate = *inflate
	cfg.Age = *age
	cfg.Maintenance = ratelimittest.Window{Start: *mStart, End: *mEnd}
	cfg.Problem = *problem
	cfg.RetryAfterZero = *retryAfterZero
	if *noRetryAfter {
		cfg.RetryAfter = -1
	}
	if *roundDown {
		cfg.ResetRounding = ratelimittest.RoundDown
	}
	cfg.UTCDates = *utcDates
	cfg.Phase = *phase
	cfg.Drip, cfg.DripBytes = *drip, *dripBytes
	cfg.Hang, cfg.HangRequests = *hang, *hangRequests
	cfg.Stream, cfg.StreamEvents = *stream, *streamEvents
	cfg.NoArrivals = true // nothing reads them, and serve runs for as long as it is let
	if !*public {
		if err := checkLoopback(*addr); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	h := ratelimittest.NewHandler(cfg)
	srv := &http.Server{
		Handler:           &logHandler{next: h, w: stdout},
		ReadHeaderTimeout: 10 * time.Second,
		// A request's context ends when serve stops: a request held
		// (-hang, -latency, -drip, -stream) ends then, as when its
		// client gives up, instead of holding Shutdown.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	fmt.Fprintf(stdout, "serving http://%s/ (%s); stop with Ctrl-C\n", ln.Addr(), pf.describe())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Shutdown waits for the answers being written; one its client does
	// not read is cut after a grace.
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(shutdown)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// shutdownGrace is how long serve, stopping, waits for the answers being
// written before it closes their connections.
const shutdownGrace = 5 * time.Second

// checkLoopback returns a usage error unless addr's host is a loopback IP
// address or "localhost". An empty host means every interface.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("-addr %q: %v", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usagef("-addr %q is not a loopback address; add -public to listen on it", addr)
}

// logHandler serves requests with next and writes one line per request to
// w: time, method, path, status and the rate-limit response fields.
type logHandler struct {
	next http.Handler
	mu   sync.Mutex // serialises writes to w
	w    io.Writer
}

// ServeHTTP serves r with the next handler, then logs its decision.
func (l *logHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A body net/http would read before answering anyway, up to 256 KiB
	// (chunked too), is read first, and dropped (the handler reads
	// none): net/http notices a client that leaves, and ends the
	// request's context, only once the body has been read to its end.
	// Left unread, a POST whose client gave up during -latency was logged
	// as answered, and one -hang held until serve stopped. A body stated
	// larger, or one whose client waits for 100 Continue, is left alone,
	// as net/http leaves it: reading it would hold a refusal until the
	// client had sent it.
	if r.ContentLength <= maxDrainedBody && r.Header.Get("Expect") == "" {
		if _, err := io.Copy(io.Discard, io.LimitReader(r.Body, maxDrainedBody+1)); err != nil {
			// The body was cut short: its client left while sending
			// it (or sent a broken one). It gets no answer, and is
			// neither served nor counted.
			l.unanswered(r)
		}
	}
	rw := &statusWriter{ResponseWriter: w}
	l.next.ServeHTTP(rw, r)
	if rw.status == 0 {
		// No answer: the client went away (during the latency, after
		// the request was admitted and counted, or during a hang), or
		// serve stopped first.
		l.unanswered(r)
	}
	var b strings.Builder
	l.start(&b, r)
	fmt.Fprintf(&b, "%d", rw.status)
	for _, name := range rateLimitFieldNames(rw.header, true) {
		for _, v := range rw.header[name] {
			fmt.Fprintf(&b, "  %s: %s", displayName(name), v)
		}
	}
	if age := rw.header.Get("Age"); age != "" {
		fmt.Fprintf(&b, "  Age: %s", age)
	}
	b.WriteByte('\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, b.String())
}

// start writes the start of r's line to b: time, method, and the path as
// sent, its query, which may hold a key, elided as the other commands
// elide it (SECURITY.md).
func (l *logHandler) start(b *strings.Builder, r *http.Request) {
	target := r.URL.EscapedPath()
	if r.URL.RawQuery != "" || r.URL.ForceQuery {
		target += "?…"
	}
	fmt.Fprintf(b, "%s %s %s ", time.Now().Format("15:04:05.000"), r.Method, target)
}

// unanswered logs r as unanswered, and cuts its connection, so that
// net/http does not answer an empty 200 for the handler.
func (l *logHandler) unanswered(r *http.Request) {
	var b strings.Builder
	l.start(&b, r)
	b.WriteString("- (no answer)\n")
	l.mu.Lock()
	io.WriteString(l.w, b.String())
	l.mu.Unlock()
	panic(http.ErrAbortHandler)
}

// statusWriter records the status and the header of the response as they
// were when it was written.
type statusWriter struct {
	http.ResponseWriter
	status int
	header http.Header
}

// WriteHeader records the first status code and the header as it stands.
func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
		s.header = s.ResponseWriter.Header().Clone()
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write writes p, recording an implicit 200 first.
func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(p)
}

// Unwrap returns the underlying ResponseWriter, for http.ResponseController.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// maxBodySize bounds serve's -body-size.
const maxBodySize = 64 << 20

// maxDrainedBody is the most of a request body serve reads before serving
// the request (see logHandler.ServeHTTP), in bytes: what net/http's server
// reads of an unread body before it answers.
const maxDrainedBody = 256 << 10

// streamEventSize returns the size of one event of a streamed body whose
// -body-size is bodySize: "data: ", the body (2 bytes for 0) and "\n\n".
func streamEventSize(bodySize int) int {
	if bodySize == 0 {
		bodySize = 2
	}
	return len("data: ") + bodySize + len("\n\n")
}

// btoi returns 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
