package ratelimittest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Handler is an [http.Handler] that enforces the policies of a [Config] and
// advertises them in the Config's dialect. It measures time with time.Now,
// so inside a testing/synctest bubble its windows pass in virtual time.
//
// Create Handlers with [NewHandler]. A Handler is safe for concurrent use
// by multiple goroutines.
type Handler struct {
	cfg      Config
	policies []policy
	body     int // BodySize with its default applied
	size     int // content bytes of the default Next, charged at admission

	mu       sync.Mutex
	origin   time.Time            // creation or last Reset
	gen      int                  // incremented by Reset
	counters []map[string]limiter // per policy, per partition key
	stats    Stats                // Status allocated
	inflight int                  // admitted requests being served
}

// Stats counts what a [Handler] has seen since it was created or last
// [Handler.Reset].
type Stats struct {
	// Requests is the number of requests received.
	Requests int

	// Admitted is the number of requests the policies admitted.
	Admitted int

	// Refused is the number of requests the policies refused (with
	// Config.RefuseStatus). Requests answered 503 during Config.Maintenance
	// count in neither Admitted nor Refused.
	Refused int

	// Status counts responses by status code. An admitted request counts
	// when Next returns; one whose context ends during Config.Latency gets
	// no response and does not count, nor one whose Next panics (its
	// response, if any was sent, cut short).
	Status map[int]int

	// PeakInFlight is the largest number of admitted requests being served
	// (in Config.Latency or Next, a streamed body included until its last
	// byte is written) at the same time.
	PeakInFlight int

	// Hung is the number of requests Config.Hang held.
	Hung int

	// Arrivals holds the arrival time of every request, in order; none
	// with Config.NoArrivals.
	Arrivals []time.Time

	// Bytes is the number of content bytes written for admitted requests.
	Bytes int64
}

// NewHandler returns a Handler for cfg whose windows start now. It copies
// cfg, so later changes to cfg have no effect.
//
// NewHandler panics if cfg is invalid: an unknown Dialect or Algorithm, a
// negative Quota, a Window that is not positive for an Algorithm that
// uses one, a LeakyBucket's Burst outside 0 to [MaxBurst], or a
// RefuseStatus other than 0 outside 400 to 599.
func NewHandler(cfg Config) *Handler {
	cfg.Policies = slices.Clone(cfg.Policies)
	switch cfg.Dialect {
	case "":
		cfg.Dialect = IETF
	case IETF, Draft06, Draft07, XRateLimitEpoch, XRateLimitDelta, XRateLimitDate, GitHub, HTTPRate, OpenAI, RetryAfterOnly, Bare429:
	default:
		panic(fmt.Sprintf("ratelimittest: unknown Dialect %q", cfg.Dialect))
	}
	cfg.RefuseStatus = refuseStatus(cfg.RefuseStatus, http.StatusTooManyRequests)
	h := &Handler{cfg: cfg, policies: policies(cfg), body: bodySize(cfg), size: contentSize(cfg)}
	h.Reset()
	return h
}

// refuseStatus returns code, the status of refusals a Config sets, or def
// if it is zero. It panics on a code that is no error status: net/http
// panics on a code outside 100 to 999, and one below 400 is no refusal, a
// client would take it as an answer.
func refuseStatus(code, def int) int {
	switch {
	case code == 0:
		return def
	case code < 400 || code > 599:
		panic(fmt.Sprintf("ratelimittest: RefuseStatus %d is no error status (400 to 599)", code))
	}
	return code
}

// limiter returns the counter of policy i for key, made on first use.
// h.mu must be held.
func (h *Handler) limiter(i int, key string) limiter {
	l := h.counters[i][key]
	if l == nil {
		l = newLimiter(&h.policies[i], h.origin, h.cfg.Phase)
		h.counters[i][key] = l
	}
	return l
}

// Reset makes h forget every request, as if it had just been created:
// counters, Stats, the requests Config.Hang holds, and the origin of
// aligned windows and of Config.Maintenance start again now. Requests in
// flight finish without being counted in the new Stats or Concurrency
// counters; one that Config.Hang holds across the Reset is answered 503
// (Service Unavailable) with no rate-limit field, as by a server that
// restarted, and counted nowhere.
func (h *Handler) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.origin = time.Now()
	h.gen++
	h.counters = make([]map[string]limiter, len(h.policies))
	for i := range h.counters {
		h.counters[i] = make(map[string]limiter)
	}
	h.stats = Stats{Status: make(map[int]int)}
	h.inflight = 0
}

// Stats returns a copy of h's counts.
func (h *Handler) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stats
	s.Status = maps.Clone(s.Status)
	s.Arrivals = slices.Clone(s.Arrivals)
	return s
}

// ServeHTTP answers r: after Config.Hang if r is one of the first
// requests, 503 during Config.Maintenance; a refusal with
// Config.RefuseStatus when a policy refuses; otherwise, after
// Config.Latency, whatever Config.Next writes. Every response carries a
// Date header and, but for those 503s (of Config.Maintenance, and of a
// request Config.Hang held across a Reset), the rate-limit fields of the
// dialect as they stand when the response is written: after a Reset, the
// new counts, in which a request admitted before it is not counted.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	keys := make([]string, len(h.policies))
	for i, p := range h.policies {
		if p.partition != nil {
			keys[i] = p.partition(r)
		}
	}

	h.mu.Lock()
	now := time.Now()
	h.stats.Requests++
	if !h.cfg.NoArrivals {
		h.stats.Arrivals = append(h.stats.Arrivals, now)
	}
	if h.cfg.Hang != 0 && h.stats.Hung < max(h.cfg.HangRequests, 1) {
		h.stats.Hung++
		gen := h.gen
		h.mu.Unlock()
		if !sleep(r.Context(), h.cfg.Hang) {
			return
		}
		h.mu.Lock()
		now = time.Now()
		if h.gen != gen {
			// Received before a Reset: not one of the new counts.
			h.mu.Unlock()
			h.common(w.Header(), now)
			writeText(w, http.StatusServiceUnavailable)
			return
		}
	}
	if h.cfg.Maintenance.contains(now.Sub(h.origin)) {
		end := h.origin.Add(h.cfg.Maintenance.End)
		h.stats.Status[http.StatusServiceUnavailable]++
		h.mu.Unlock()
		h.common(w.Header(), now)
		w.Header().Set("Retry-After", fieldDate(time.Unix(ceilUnix(end), 0), h.cfg.UTCDates))
		writeText(w, http.StatusServiceUnavailable)
		return
	}
	// An answer to HEAD has no content (RFC 9110 §9.3.2): a content-bytes
	// policy counts none for it, whatever Next writes (a server drops it).
	size, head := h.size, r.Method == http.MethodHead
	if head {
		size = 0
	}
	lims := make([]limiter, len(h.policies))
	costs := make([]int64, len(h.policies))
	admit := true
	var wait time.Duration // until every policy would admit r
	never := false         // some policy never will
	var violated []string
	for i := range h.policies {
		p := &h.policies[i]
		l := h.limiter(i, keys[i])
		lims[i], costs[i] = l, p.cost(size)
		d, ok := l.wait(now, costs[i])
		if !ok {
			// Full of requests in flight: when one ends is unknown.
			// Otherwise the cost is above the whole quota.
			d = nominalReset
			never = never || p.algorithm != Concurrency || costs[i] > p.quota
		}
		if !ok || d > 0 {
			admit = false
			violated = append(violated, p.name)
			wait = max(wait, d)
		}
	}
	if !admit {
		h.stats.Refused++
		h.stats.Status[h.cfg.RefuseStatus]++
		states := h.states(now, lims, keys)
		h.mu.Unlock()
		if never {
			wait = -1
		}
		h.refuse(w, r, now, states, wait, violated)
		return
	}
	for i, l := range lims {
		l.take(now, costs[i])
	}
	h.stats.Admitted++
	h.inflight++
	h.stats.PeakInFlight = max(h.stats.PeakInFlight, h.inflight)
	gen := h.gen
	var states []state
	if h.cfg.Latency <= 0 {
		states = h.states(now, lims, keys)
	}
	h.mu.Unlock()

	cw := &countingWriter{ResponseWriter: w, code: http.StatusOK}
	served := false
	defer func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		now := time.Now()
		if head {
			cw.n = 0 // written, and dropped
		}
		for i, l := range lims {
			l.release(costs[i])
			// A custom Next may write more than it was charged at admission.
			if p := &h.policies[i]; p.unit == unitBytes && p.algorithm != Concurrency && cw.n > costs[i] {
				l.take(now, cw.n-costs[i])
			}
		}
		if gen != h.gen {
			return
		}
		h.inflight--
		h.stats.Bytes += cw.n
		if served {
			h.stats.Status[cw.code]++
		}
	}()

	if h.cfg.Latency > 0 {
		if !sleep(r.Context(), h.cfg.Latency) {
			return
		}
		h.mu.Lock()
		now = time.Now()
		cur := lims
		if h.gen != gen {
			// Answered after a Reset: the fields state the new counts
			// (the discarded ones made a client wait for nothing).
			cur = make([]limiter, len(h.policies))
			for i := range cur {
				cur[i] = h.limiter(i, keys[i])
			}
		}
		states = h.states(now, cur, keys)
		h.mu.Unlock()
	}
	h.common(w.Header(), now)
	writeFields(w.Header(), &h.cfg, now, states)
	switch {
	case h.cfg.Next != nil:
		h.cfg.Next.ServeHTTP(cw, r)
	case streaming(h.cfg):
		h.stream(cw, r)
	default:
		cw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		cw.Header().Set("Content-Length", strconv.Itoa(h.body))
		cw.WriteHeader(http.StatusOK)
		cw.Write(defaultBody(h.body))
	}
	// Counted once Next returns: one that panics (http.ErrAbortHandler)
	// sends no response, and a 200 was counted for it.
	served = true
}

// states reports the advertised state of every policy at now. h.mu is held.
func (h *Handler) states(now time.Time, lims []limiter, keys []string) []state {
	states := make([]state, len(lims))
	for i, l := range lims {
		p := &h.policies[i]
		reset, ok := l.reset(now)
		full := l.full(now)
		if !ok {
			// A Concurrency policy: it has none, and says a second.
			reset, full = nominalReset, nominalReset
		}
		end, hasEnd := l.windowEnd(now)
		r := l.available(now)
		// The requests r still admits, to compare policies of other
		// units: a content-bytes policy's r counts bytes.
		honest := r
		if c := p.cost(h.size); c > 1 {
			honest = r / c
		} else if c <= 0 {
			honest = math.MaxInt64 // its requests cost nothing
		}
		s := state{
			name:      p.name,
			unit:      p.unit,
			quota:     p.quota,
			window:    p.window,
			remaining: r,
			honest:    honest,
			reset:     reset,
			hasReset:  ok,
			full:      full,
			end:       end,
			hasEnd:    hasEnd,
			key:       keys[i],
			keyed:     p.partition != nil,
		}
		if k := h.cfg.Inflate; k > 1 {
			s.quota = saturatingMul(p.quota, k)
			s.remaining = saturatingAdd(r, saturatingMul(p.quota, k-1))
		}
		states[i] = s
	}
	return states
}

// common sets the fields every response carries.
func (h *Handler) common(hdr http.Header, now time.Time) {
	hdr.Set("Date", httpDate(now))
	if h.cfg.Age > 0 {
		hdr.Set("Age", strconv.FormatInt(ceilSeconds(h.cfg.Age), 10))
	}
}

// refuse writes a refusal of r. wait is how long until every policy would
// admit the request; negative when none will.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, now time.Time, states []state, wait time.Duration, violated []string) {
	hdr := w.Header()
	h.common(hdr, now)
	writeFields(hdr, &h.cfg, now, states)
	if v, ok := h.retryAfter(now, states, wait); ok {
		hdr.Set("Retry-After", v)
	}
	body := []byte(http.StatusText(h.cfg.RefuseStatus) + "\n")
	hdr.Set("Content-Type", "text/plain; charset=utf-8")
	if h.cfg.Problem {
		body, _ = json.Marshal(problem{
			Type:     "https://iana.org/assignments/http-problem-types#quota-exceeded",
			Title:    "Quota Exceeded",
			Status:   h.cfg.RefuseStatus,
			Violated: violated,
		})
		body = append(body, '\n')
		hdr.Set("Content-Type", "application/problem+json")
	}
	if h.cfg.Drip > 0 {
		h.drip(w, r, body)
		return
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(h.cfg.RefuseStatus)
	w.Write(body)
}

// retryAfter reports the Retry-After of a refusal at now, and whether
// there is one. wait is negative when no wait will admit the request.
func (h *Handler) retryAfter(now time.Time, states []state, wait time.Duration) (string, bool) {
	switch d := h.cfg.Dialect; {
	case h.cfg.RetryAfterZero:
		return "0", true
	case h.cfg.RetryAfter > 0:
		return delaySeconds(h.cfg.RetryAfter), true
	case h.cfg.RetryAfter < 0, d == GitHub, d == Bare429, wait < 0:
		return "", false // wait < 0: no wait will do
	case d == RetryAfterOnly && h.cfg.Malformed:
		return "soon", true
	case d == XRateLimitDate:
		return fieldDate(time.Unix(roundUnix(now.Add(wait), h.cfg.ResetRounding), 0), h.cfg.UTCDates), true
	case d == HTTPRate && len(states) > 0:
		// The window, whatever the wait; a Concurrency policy has none.
		window := states[describe(states)].window
		if window <= 0 {
			window = nominalReset
		}
		return strconv.FormatInt(int64(window/time.Second), 10), true
	}
	return delaySeconds(wait), true
}

// drip writes the refusal's header at once, then body padded with
// newlines to Config.DripBytes, one byte every Config.Drip, until it is
// written, a write fails or r's context ends.
func (h *Handler) drip(w http.ResponseWriter, r *http.Request, body []byte) {
	n := h.cfg.DripBytes
	if n <= 0 {
		n = defaultDripBytes
	}
	// The padding is written as it goes, never built: a DripBytes meant
	// to hold a client for good costs no memory in proportion to it (it
	// was appended first, and math.MaxInt sent no header at all).
	n = max(n, len(body))
	w.Header().Del("Content-Length")
	w.WriteHeader(h.cfg.RefuseStatus)
	rc := http.NewResponseController(w)
	rc.Flush()
	one := []byte{'\n'}
	for i := 0; i < n; i++ {
		if !sleep(r.Context(), h.cfg.Drip) {
			return
		}
		one[0] = '\n'
		if i < len(body) {
			one[0] = body[i]
		}
		if _, err := w.Write(one); err != nil {
			return
		}
		rc.Flush()
	}
}

// stream writes the default body as server-sent events: the header at
// once, then Config.StreamEvents events evenly over Config.Stream, until
// they are written, a write fails or r's context ends.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	event := append(append([]byte("data: "), defaultBody(h.body)...), "\n\n"...)
	start := time.Now()
	n := int64(streamEvents(h.cfg))
	for k := int64(1); k <= n; k++ {
		at := start.Add(time.Duration(mulDiv(k, int64(h.cfg.Stream), n)))
		if !sleep(r.Context(), max(time.Until(at), 0)) {
			return
		}
		if _, err := w.Write(event); err != nil {
			return
		}
		rc.Flush()
	}
}

// sleep waits for d, or until ctx ends if d is negative, and reports
// whether ctx is still alive. It waits with the time package's timers, so
// inside a testing/synctest bubble the wait is virtual.
func sleep(ctx context.Context, d time.Duration) bool {
	if d == 0 {
		return ctx.Err() == nil
	}
	var expired <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-expired:
		return true
	case <-ctx.Done():
		return false
	}
}

// problem is an RFC 9457 problem detail of the quota-exceeded type
// (draft-ietf-httpapi-ratelimit-headers-11 §5.1).
type problem struct {
	Type     string   `json:"type"`
	Title    string   `json:"title"`
	Status   int      `json:"status"`
	Violated []string `json:"violated-policies"`
}

// writeText writes status with its text as a text/plain body.
func writeText(w http.ResponseWriter, status int) {
	body := http.StatusText(status) + "\n"
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write([]byte(body))
}

// defaultBody returns the n-byte body of the default Next: "okok…".
func defaultBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = "ok"[i%2]
	}
	return b
}

// countingWriter records the status and counts the body bytes Next writes.
type countingWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
	n     int64
}

func (c *countingWriter) WriteHeader(code int) {
	if !c.wrote && code >= 200 {
		c.code, c.wrote = code, true
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.wrote = true
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

// Flush flushes the underlying writer, if it can.
func (c *countingWriter) Flush() {
	http.NewResponseController(c.ResponseWriter).Flush()
}

// Unwrap lets [http.ResponseController] reach the underlying writer.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func saturatingMul(a, b int64) int64 {
	if a != 0 && b > (1<<63-1)/a {
		return 1<<63 - 1
	}
	return a * b
}

func saturatingAdd(a, b int64) int64 {
	if b > 0 && a > (1<<63-1)-b {
		return 1<<63 - 1
	}
	return a + b
}
