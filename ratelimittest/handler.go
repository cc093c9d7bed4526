package ratelimittest

import (
	"encoding/json"
	"fmt"
	"maps"
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
	body     int // body size of the default Next

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
	// no response and does not count.
	Status map[int]int

	// PeakInFlight is the largest number of admitted requests being served
	// (in Config.Latency or Next) at the same time.
	PeakInFlight int

	// Arrivals holds the arrival time of every request, in order.
	Arrivals []time.Time

	// Bytes is the number of content bytes written for admitted requests.
	Bytes int64
}

// NewHandler returns a Handler for cfg whose windows start now. It copies
// cfg, so later changes to cfg have no effect.
//
// NewHandler panics if cfg is invalid: an unknown Dialect or Algorithm, a
// negative Quota, or a Window that is not positive for an Algorithm that
// uses one.
func NewHandler(cfg Config) *Handler {
	cfg.Policies = slices.Clone(cfg.Policies)
	switch cfg.Dialect {
	case "":
		cfg.Dialect = IETF
	case IETF, Draft06, Draft07, XRateLimitEpoch, XRateLimitDelta, GitHub, OpenAI, RetryAfterOnly, Bare429:
	default:
		panic(fmt.Sprintf("ratelimittest: unknown Dialect %q", cfg.Dialect))
	}
	if cfg.RefuseStatus == 0 {
		cfg.RefuseStatus = http.StatusTooManyRequests
	}
	h := &Handler{cfg: cfg, policies: policies(cfg), body: bodySize(cfg)}
	h.Reset()
	return h
}

// Reset makes h forget every request, as if it had just been created:
// counters, Stats, and the origin of aligned windows and of
// Config.Maintenance start again now. Requests in flight finish without
// being counted in the new Stats or Concurrency counters.
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

// ServeHTTP answers r: 503 during Config.Maintenance; a refusal with
// Config.RefuseStatus when a policy refuses; otherwise, after
// Config.Latency, whatever Config.Next writes. Every response carries a
// Date header and the rate-limit fields of the dialect as they stand when
// the response is written.
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
	h.stats.Arrivals = append(h.stats.Arrivals, now)
	if h.cfg.Maintenance.contains(now.Sub(h.origin)) {
		end := h.origin.Add(h.cfg.Maintenance.End)
		h.stats.Status[http.StatusServiceUnavailable]++
		h.mu.Unlock()
		h.common(w.Header(), now)
		w.Header().Set("Retry-After", httpDate(time.Unix(ceilUnix(end), 0)))
		writeText(w, http.StatusServiceUnavailable)
		return
	}
	lims := make([]limiter, len(h.policies))
	costs := make([]int64, len(h.policies))
	admit := true
	var wait time.Duration // until every policy would admit r
	var violated []string
	for i := range h.policies {
		p := &h.policies[i]
		l := h.counters[i][keys[i]]
		if l == nil {
			l = newLimiter(p, h.origin)
			h.counters[i][keys[i]] = l
		}
		lims[i], costs[i] = l, p.cost(h.body)
		d, ok := l.wait(now, costs[i])
		if !ok {
			d = nominalReset
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
		h.refuse(w, now, states, wait, violated)
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
		t := time.NewTimer(h.cfg.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
		h.mu.Lock()
		now = time.Now()
		states = h.states(now, lims, keys)
		h.mu.Unlock()
	}
	h.common(w.Header(), now)
	writeFields(w.Header(), h.cfg.Dialect, now, states, h.cfg.Malformed)
	served = true
	if h.cfg.Next != nil {
		h.cfg.Next.ServeHTTP(cw, r)
		return
	}
	cw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	cw.Header().Set("Content-Length", strconv.Itoa(h.body))
	cw.WriteHeader(http.StatusOK)
	cw.Write(defaultBody(h.body))
}

// states reports the advertised state of every policy at now. h.mu is held.
func (h *Handler) states(now time.Time, lims []limiter, keys []string) []state {
	states := make([]state, len(lims))
	for i, l := range lims {
		p := &h.policies[i]
		reset, ok := l.reset(now)
		if !ok {
			reset = nominalReset
		}
		r := l.available(now)
		s := state{
			name:      p.name,
			unit:      p.unit,
			quota:     p.quota,
			window:    p.window,
			remaining: r,
			honest:    r,
			reset:     reset,
			hasReset:  ok,
			full:      l.full(now),
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

// refuse writes a refusal. wait is how long until every policy would admit
// the request.
func (h *Handler) refuse(w http.ResponseWriter, now time.Time, states []state, wait time.Duration, violated []string) {
	hdr := w.Header()
	h.common(hdr, now)
	writeFields(hdr, h.cfg.Dialect, now, states, h.cfg.Malformed)
	switch {
	case h.cfg.RetryAfter > 0:
		hdr.Set("Retry-After", delaySeconds(h.cfg.RetryAfter))
	case h.cfg.Dialect == GitHub || h.cfg.Dialect == Bare429:
	case h.cfg.Dialect == RetryAfterOnly && h.cfg.Malformed:
		hdr.Set("Retry-After", "soon")
	default:
		hdr.Set("Retry-After", delaySeconds(wait))
	}
	if !h.cfg.Problem {
		writeText(w, h.cfg.RefuseStatus)
		return
	}
	body, _ := json.Marshal(problem{
		Type:     "https://iana.org/assignments/http-problem-types#quota-exceeded",
		Title:    "Quota Exceeded",
		Status:   h.cfg.RefuseStatus,
		Violated: violated,
	})
	body = append(body, '\n')
	hdr.Set("Content-Type", "application/problem+json")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(h.cfg.RefuseStatus)
	w.Write(body)
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
