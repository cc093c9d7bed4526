package ratelimittest

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RobotsConfig says how a [RobotsHandler] answers requests for
// /robots.txt (RFC 9309).
type RobotsConfig struct {
	// Body is the robots.txt sent with a 2xx Status, such as
	//	User-agent: *
	//	Disallow: /private/
	//	Crawl-delay: 0.5
	Body string

	// Status is the status code of the answer. If zero, 200. A 4xx makes
	// robots.txt unavailable to a crawler (every path allowed), a 5xx
	// unreachable (every path disallowed) (RFC 9309 §2.3.1).
	Status int

	// RetryAfter, if positive, is sent as Retry-After, in whole seconds
	// rounded up, with every answer that is not a redirect.
	RetryAfter time.Duration

	// Delay is how long the answer takes (a slow server), measured with
	// the time package: in virtual time inside a testing/synctest bubble.
	// If the request's context ends first, nothing is written.
	Delay time.Duration

	// Pad is how many bytes of comment lines come before Body, to make a
	// huge robots.txt.
	Pad int

	// Redirects is how many redirects (301) come before the answer: the
	// first to the relative Location /robots.txt?hop=1, the next to
	// ?hop=2, and so on. If negative, every answer is a redirect.
	Redirects int

	// RedirectTo, if not empty, is the Location of the last redirect, an
	// absolute URL such as another origin's /robots.txt. A request for
	// RedirectTo itself that reaches this handler (another origin it
	// serves, or its own robots.txt by another scheme) gets the answer, so
	// that the redirects end there; one whose first request is RedirectTo
	// gets no redirect.
	RedirectTo string

	// Next serves every path but /robots.txt. If nil, each gets 200 with
	// a short text body.
	Next http.Handler
}

// RobotsHandler is an [http.Handler] that serves a robots.txt as its
// [RobotsConfig] says, and every other path with Config.Next, counting the
// requests of each ([RobotsStats]).
//
// Create RobotsHandlers with [NewRobotsHandler]. A RobotsHandler is safe
// for concurrent use by multiple goroutines.
type RobotsHandler struct {
	mu    sync.Mutex
	cfg   RobotsConfig
	stats RobotsStats
}

// RobotsStats counts what a [RobotsHandler] has seen since it was created.
type RobotsStats struct {
	// Fetches is the number of requests for /robots.txt, redirects
	// included.
	Fetches int

	// FetchesByHost counts the requests for /robots.txt by Host, for a
	// handler that serves several origins.
	FetchesByHost map[string]int

	// FetchTimes holds the arrival time of every request for /robots.txt,
	// in order.
	FetchTimes []time.Time

	// Requests is the number of requests for other paths.
	Requests int

	// Paths counts the requests for other paths by URL path (without the
	// query).
	Paths map[string]int

	// Arrivals holds the arrival time of every request for another path,
	// in order.
	Arrivals []time.Time
}

// NewRobotsHandler returns a RobotsHandler for cfg. It copies cfg, so later
// changes to cfg have no effect; use [RobotsHandler.Set].
func NewRobotsHandler(cfg RobotsConfig) *RobotsHandler {
	return &RobotsHandler{cfg: cfg, stats: RobotsStats{FetchesByHost: map[string]int{}, Paths: map[string]int{}}}
}

// Set makes h answer as cfg says from now on, keeping its counts: to make
// a robots.txt that answered 503 answer 200, for example.
func (h *RobotsHandler) Set(cfg RobotsConfig) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cfg = cfg
}

// Stats returns a copy of what h has counted.
func (h *RobotsHandler) Stats() RobotsStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stats
	s.FetchesByHost = maps.Clone(s.FetchesByHost)
	s.Paths = maps.Clone(s.Paths)
	s.FetchTimes = slices.Clone(s.FetchTimes)
	s.Arrivals = slices.Clone(s.Arrivals)
	return s
}

// ServeHTTP implements [http.Handler].
func (h *RobotsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	h.mu.Lock()
	cfg := h.cfg
	if r.URL.Path != "/robots.txt" {
		h.stats.Requests++
		h.stats.Paths[r.URL.Path]++
		h.stats.Arrivals = append(h.stats.Arrivals, now)
		h.mu.Unlock()
		if cfg.Next != nil {
			cfg.Next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok "+r.URL.Path+"\n")
		return
	}
	h.stats.Fetches++
	h.stats.FetchesByHost[r.Host]++
	h.stats.FetchTimes = append(h.stats.FetchTimes, now)
	h.mu.Unlock()

	if cfg.Delay > 0 {
		t := time.NewTimer(cfg.Delay)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
	}
	hop, _ := strconv.Atoi(r.URL.Query().Get("hop"))
	if cfg.Redirects < 0 || hop < cfg.Redirects && !(cfg.RedirectTo != "" && requests(r, cfg.RedirectTo)) {
		loc := fmt.Sprintf("/robots.txt?hop=%d", hop+1)
		if cfg.RedirectTo != "" && hop+1 == cfg.Redirects {
			loc = cfg.RedirectTo
		}
		w.Header().Set("Location", loc)
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	if cfg.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(ceilSeconds(cfg.RetryAfter), 10))
	}
	status := cfg.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	if cfg.Pad > 0 {
		writePad(w, cfg.Pad)
	}
	io.WriteString(w, cfg.Body)
}

// requests reports whether r asks for the URL loc: its scheme and host, if
// loc has them, its path and its query.
func requests(r *http.Request, loc string) bool {
	u, err := url.Parse(loc)
	if err != nil || u.Path != r.URL.Path || u.RawQuery != r.URL.RawQuery {
		return false
	}
	scheme := r.URL.Scheme // set by a Transport, not by a server
	if scheme == "" {
		scheme = "http"
		if r.TLS != nil {
			scheme = "https"
		}
	}
	return (u.Scheme == "" || strings.EqualFold(u.Scheme, scheme)) &&
		(u.Host == "" || strings.EqualFold(u.Host, r.Host))
}

// writePad writes n bytes of comment lines to w.
func writePad(w io.Writer, n int) {
	line := "#" + strings.Repeat(" padding", 15) + "\n" // 121 bytes
	chunk := strings.Repeat(line, 64)
	for n > 0 {
		s := chunk
		if n <= len(chunk) {
			s = chunk[:n-1] + "\n" // end on a whole line
		}
		if _, err := io.WriteString(w, s); err != nil {
			return
		}
		n -= len(s)
	}
}
