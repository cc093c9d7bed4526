package ratelimittest

import (
	"fmt"
	"math"
	"net/http"
	"time"
)

// Algorithm names the counting rule of a [Policy].
type Algorithm string

// The algorithms a [Policy] can enforce. Each admits a request of cost c at
// instant now only if c quota units are available then; refused requests
// are not counted.
const (
	// FixedWindow counts admissions in windows of length Window, aligned to
	// multiples of Window since the [Handler] was created (or last [Handler.Reset]).
	// The counter returns to zero at each window boundary.
	FixedWindow Algorithm = "fixed-window"

	// FixedWindowFromFirst counts admissions in windows of length Window
	// that are not aligned: a window starts at the first admission after
	// the last one ended, as a counter stored with an expiry does
	// (ulule/limiter's stores, GitHub's hourly windows). The counter
	// returns to zero when its window ends. [Config.Phase] plays no part.
	FixedWindowFromFirst Algorithm = "fixed-window-from-first"

	// SlidingLog admits at most Quota units in any span of Window. It keeps
	// an exact log of the admissions of the last Window, pruned as they age.
	SlidingLog Algorithm = "sliding-log"

	// SlidingWindow is the sliding-window counter: the count of the previous
	// aligned window, weighted by the share of it that still overlaps the
	// last Window and rounded up, plus the count of the current window.
	SlidingWindow Algorithm = "sliding-window"

	// TokenBucket is a token bucket, equivalently GCRA: it starts full with
	// Quota tokens and gains Quota tokens per Window, evenly (one every
	// Window/Quota), never holding more than Quota.
	TokenBucket Algorithm = "token-bucket"

	// SlidingWindowRounded is the sliding-window counter of go-chi/httprate:
	// as SlidingWindow, except that the weighted count of the previous
	// window is rounded to the nearest integer (halves up) instead of up, so
	// it admits a request of cost c at offset e into the current window when
	//
	//	round(prev*(Window-e)/Window) + cur + c <= Quota
	//
	// Pair it with the [HTTPRate] dialect to reproduce that middleware.
	SlidingWindowRounded Algorithm = "sliding-window-rounded"

	// LeakyBucket is nginx's limit_req with nodelay: requests leak out at
	// Quota per Window and up to Policy.Burst requests in excess of that
	// rate are tolerated, served at once. Its accounting is nginx's, in
	// thousandths of a request and whole milliseconds (see the package
	// documentation): a fresh or drained bucket admits Burst+1 requests at
	// once, then one every Window/Quota.
	LeakyBucket Algorithm = "leaky-bucket"

	// Concurrency admits at most Quota requests in flight at once. Its unit
	// is "concurrent-requests" and its Window is ignored.
	Concurrency Algorithm = "concurrency"
)

// Dialect names the rate-limit header fields a [Handler] sends.
type Dialect string

// The dialects a [Handler] speaks. The examples show a fixed window of 100
// requests per minute, 35 seconds before its end, after 60 admissions.
//
// With several policies, IETF lists every policy in both fields; the other
// dialects describe only the policy whose remaining quota admits the
// fewest requests (on a tie, the one with the longest reset); a
// "content-bytes" policy so described states its remaining quota in bytes.
//
// Refused requests carry Retry-After in delay-seconds in every dialect
// except XRateLimitDate, which sends an HTTP-date, HTTPRate, which sends
// the window length, and GitHub and Bare429, which send none.
// Config.RetryAfter and Config.RetryAfterZero override all of them.
const (
	// IETF is draft-ietf-httpapi-ratelimit-headers-11:
	//	RateLimit-Policy: "default";q=100;w=60
	//	RateLimit: "default";r=40;t=35
	// A policy whose unit is not requests carries qu ("content-bytes",
	// "concurrent-requests"); a partitioned policy carries pk on both
	// fields; a Concurrency policy has no w and no t.
	IETF Dialect = "ietf"

	// Draft06 is draft-06 (express-rate-limit "draft-6"), reset in delta seconds:
	//	RateLimit-Limit: 100
	//	RateLimit-Remaining: 40
	//	RateLimit-Reset: 35
	//	RateLimit-Policy: 100;w=60
	Draft06 Dialect = "draft-06"

	// Draft07 is express-rate-limit "draft-7", a Structured Fields Dictionary:
	//	RateLimit: limit=100, remaining=40, reset=35
	//	RateLimit-Policy: 100;w=60
	Draft07 Dialect = "draft-07"

	// XRateLimitEpoch is the legacy triplet with the reset as Unix epoch
	// seconds, consistent with the Date header sent alongside:
	//	X-RateLimit-Limit: 100
	//	X-RateLimit-Remaining: 40
	//	X-RateLimit-Reset: 1700000035
	XRateLimitEpoch Dialect = "x-ratelimit-epoch"

	// XRateLimitDelta is the legacy triplet with the reset in delta seconds:
	//	X-RateLimit-Limit: 100
	//	X-RateLimit-Remaining: 40
	//	X-RateLimit-Reset: 35
	XRateLimitDelta Dialect = "x-ratelimit-delta"

	// GitHub is the GitHub REST API's shape, reset in epoch seconds:
	//	X-Ratelimit-Limit: 100
	//	X-Ratelimit-Remaining: 40
	//	X-Ratelimit-Used: 60
	//	X-Ratelimit-Reset: 1700000035
	//	X-Ratelimit-Resource: core
	// GitHub sends Retry-After only sometimes; here it never does: a refusal
	// says remaining 0 and the reset.
	GitHub Dialect = "github"

	// OpenAI is the OpenAI API's shape; the reset is the time until the
	// policy is fully refilled, formatted by [time.Duration.String]:
	//	X-Ratelimit-Limit-Requests: 100
	//	X-Ratelimit-Remaining-Requests: 40
	//	X-Ratelimit-Reset-Requests: 35s
	OpenAI Dialect = "openai"

	// XRateLimitDate is the legacy triplet with the reset as an HTTP-date,
	// as sethvargo/go-limiter's httplimit sends it; refusals carry
	// Retry-After as an HTTP-date too (the instant every policy would admit
	// the request). Both are rounded to a whole second as
	// Config.ResetRounding says, and end in "UTC" with Config.UTCDates:
	//	X-RateLimit-Limit: 100
	//	X-RateLimit-Remaining: 40
	//	X-RateLimit-Reset: Tue, 14 Nov 2023 22:14:35 GMT
	XRateLimitDate Dialect = "x-ratelimit-date"

	// HTTPRate is go-chi/httprate's shape: the legacy triplet whose reset
	// is the end of the current aligned window (for FixedWindow and the
	// sliding-window counters; the effective window otherwise) as Unix
	// epoch seconds, whatever the count; refusals carry Retry-After set to
	// the Window in whole seconds, rounded down, whatever the wait:
	//	X-RateLimit-Limit: 100
	//	X-RateLimit-Remaining: 40
	//	X-RateLimit-Reset: 1700000035
	// Pair it with [SlidingWindowRounded] to reproduce that middleware.
	HTTPRate Dialect = "httprate"

	// RetryAfterOnly sends no quota fields; refusals carry Retry-After.
	RetryAfterOnly Dialect = "retry-after-only"

	// Bare429 sends no rate-limit fields at all, not even Retry-After.
	Bare429 Dialect = "bare-429"
)

// Policy is one limit a [Handler] enforces.
type Policy struct {
	// Name is the IETF policy name. If empty, it is "default". Give each
	// policy of a Config a name of its own (within one Partition): the
	// fields state them all, and a client reads a repeated name as one
	// policy (package parse keeps one item of each name per field, so two
	// unnamed policies read back as one quota that is neither).
	Name string

	// Algorithm is the counting rule. If empty, it is FixedWindow.
	Algorithm Algorithm

	// Quota is how many units are admitted per Window (for Concurrency: at
	// once). It must not be negative; zero refuses every request that costs
	// anything.
	Quota int64

	// Window is the span Quota applies to. It must be positive, except for
	// Concurrency, which ignores it. The IETF w parameter is Window in whole
	// seconds, rounded up.
	Window time.Duration

	// Unit is the quota unit. If empty, it is "requests" (for Concurrency,
	// "concurrent-requests", the only unit it takes, and the one no other
	// algorithm takes: NewHandler panics otherwise). With "content-bytes", a request costs the
	// content bytes of its response (see the package documentation); with
	// any other unit a request costs one. Units other than "requests" are
	// advertised verbatim as the IETF qu parameter.
	Unit string

	// Burst is how many requests a LeakyBucket tolerates in excess of its
	// rate, as nginx's burst parameter: a fresh or drained bucket admits
	// Burst+1 at once. It must be between 0 and [MaxBurst]; other
	// algorithms ignore it.
	Burst int64

	// Partition, if not nil, gives each request's partition key: each key
	// has its own counters, and the IETF dialect sends it as pk. If nil, all
	// requests share one counter. It must be safe for concurrent use. A
	// key's counters are kept until [Handler.Reset], idle or not (about
	// 130 bytes a key): a key drawn from what clients send (an API key
	// header) grows the Handler with every distinct value, as
	// Stats.Arrivals grows with every request (unless Config.NoArrivals).
	Partition func(*http.Request) string
}

// MaxBurst is the largest Policy.Burst. A LeakyBucket counts, as nginx
// does, in thousandths of a request, in an int64: Burst+1 requests must fit.
const MaxBurst = math.MaxInt64/1000 - 1

// Window is a span of time measured from the creation of a [Handler]
// (or its last [Handler.Reset]): it holds the offsets d with Start <= d < End.
// The zero Window is empty.
type Window struct {
	Start, End time.Duration
}

// contains reports whether offset d lies in w.
func (w Window) contains(d time.Duration) bool {
	return w.Start <= d && d < w.End
}

// Config describes a rate-limited server. The zero Config admits every
// request at once and answers 200 without rate-limit fields.
//
// [NewHandler] copies the Config: changing it afterwards has no effect.
type Config struct {
	// Policies all apply to every request: a request is admitted only if
	// every policy admits it, and then it is counted by every policy.
	// If empty, every request is admitted.
	Policies []Policy

	// Dialect chooses the rate-limit header fields sent. If empty, it is IETF.
	Dialect Dialect

	// Latency is how long serving an admitted request takes, before Next is
	// called. It passes with the time package's timers, so inside a
	// testing/synctest bubble it is virtual. Refusals answer at once.
	// If zero, admitted requests are served at once.
	Latency time.Duration

	// Next serves admitted requests. If nil, admitted requests get 200 with
	// a text/plain body of BodySize bytes.
	Next http.Handler

	// BodySize is the size of the body the default Next writes, in bytes,
	// and the cost of a request to a "content-bytes" policy at admission.
	// If zero, it is 2; if negative, 0.
	BodySize int

	// RefuseStatus is the status code of refusals, 400 to 599 (a 403 of
	// GitHub's secondary limits, a 503). If zero, it is 429.
	RefuseStatus int

	// Malformed makes the Handler send syntactically malformed rate-limit
	// fields in its dialect (for example IETF Token names and r=-1, or
	// non-numeric legacy values) while still enforcing its policies. In the
	// RetryAfterOnly dialect the Retry-After of refusals is malformed too.
	Malformed bool

	// RetryAfter, if positive, replaces the honest Retry-After of every
	// refusal, in every dialect, with this duration in delay-seconds,
	// rounded up (for example 1000000*time.Second for the absurd case).
	// If negative, refusals carry no Retry-After in any dialect, as
	// ulule/limiter's middleware sends them.
	RetryAfter time.Duration

	// RetryAfterZero makes every refusal carry "Retry-After: 0", in every
	// dialect, as a hostile or broken server does. It overrides RetryAfter.
	RetryAfterZero bool

	// Inflate, if greater than 1, advertises a quota Inflate times the one
	// enforced: every policy advertises Quota*Inflate and the remaining
	// quota as if that larger quota were in force, that is
	// remaining + Quota*(Inflate-1). In the Structured Fields of IETF,
	// Draft06 and Draft07, a number over 15 digits is stated as
	// 999999999999999, the largest RFC 9651 allows.
	Inflate int64

	// Age, if positive, adds "Age: <seconds>" (rounded up) to every
	// response, as if it came from a cache.
	Age time.Duration

	// Maintenance is a span during which every request gets 503 with a
	// Retry-After HTTP-date of the span's end (rounded up to a whole
	// second) and no rate-limit field, without being counted by the
	// policies. If zero, there is none.
	Maintenance Window

	// Problem makes refusals carry an RFC 9457 application/problem+json body
	// of type https://iana.org/assignments/http-problem-types#quota-exceeded
	// listing the refusing policies in "violated-policies".
	Problem bool

	// Phase starts the aligned windows (of FixedWindow and the
	// sliding-window counters) and a LeakyBucket's millisecond clock Phase
	// before the Handler's creation (or last Reset), so that the first
	// window ends Window-Phase after it; a Phase of a Window or more, however
	// long, counts as its remainder modulo the Window (modulo a millisecond
	// for a LeakyBucket's clock), which ends the windows at the same
	// instants. A fraction of a second puts window ends between whole
	// seconds, as on a real server whose windows start at its first
	// request: whole-second resets (epoch seconds, HTTP-dates) are then
	// rounded. If zero or negative, windows start at the creation.
	Phase time.Duration

	// ResetRounding is how the resets sent as instants (the epoch seconds of
	// XRateLimitEpoch, GitHub and HTTPRate; the HTTP-dates of
	// XRateLimitDate, Retry-After included) are rounded to a whole second.
	// The zero value, RoundUp, never states an instant before the true one.
	// Every response carries a Date header truncated to a whole second.
	ResetRounding Rounding

	// UTCDates makes the HTTP-dates the Handler sends in rate-limit fields
	// and Retry-After end in "UTC" instead of "GMT" (Go's time.RFC1123 in
	// UTC, as some Go limiters write them); the Date header keeps "GMT", as
	// net/http writes it. Only XRateLimitDate and the Retry-After of
	// Config.Maintenance send dates.
	UTCDates bool

	// Drip, if positive, makes refusals answer slowly: the header at once,
	// then the body one byte every Drip, flushed each time, without a
	// Content-Length. The Handler stops early when the request's context
	// ends or a write fails, as when the client closes the body or the
	// connection.
	Drip time.Duration

	// DripBytes is the length of a dripping refusal body, in bytes: the
	// usual refusal body padded with newlines, never cut. If zero or
	// negative, it is 65536.
	DripBytes int

	// Hang, if not zero, holds each of the first HangRequests requests the
	// Handler receives (since its creation or last Reset) before anything
	// else happens to it, as a cold server that answers its first request
	// late: for Hang if positive, until the request's context ends if
	// negative. A request whose context ends while it hangs gets no
	// response; the others are then served as usual. Stats.Hung counts them.
	Hang time.Duration

	// HangRequests is how many requests Hang holds. If zero or negative, 1.
	HangRequests int

	// Stream, if positive, makes the default Next stream its body as
	// server-sent events (Content-Type: text/event-stream, no
	// Content-Length): it sends the header at once, then StreamEvents
	// events evenly over Stream, the last one Stream after the header,
	// flushing each. The request stays in flight (for Concurrency policies
	// and Stats.PeakInFlight) until the last event is written or the
	// request's context ends. Each event is "data: " followed by the
	// BodySize-byte default body and two newlines.
	Stream time.Duration

	// StreamEvents is the number of events a streamed body holds. If zero
	// or negative, 10.
	StreamEvents int

	// NoArrivals leaves Stats.Arrivals empty: a Handler that serves for
	// long (as polite serve does) otherwise keeps the arrival time of
	// every request it receives (24 bytes each, and the spare room of the
	// slice that holds them), until Reset.
	NoArrivals bool
}

// Rounding is how a [Handler] rounds an instant to a whole second.
type Rounding int

const (
	// RoundUp rounds up to the next whole second (a ceiling), as
	// express-rate-limit's legacy X-RateLimit-Reset does: the instant sent
	// is never before the true one, but with a Date truncated to a whole
	// second, the reset minus Date can exceed the true delay by up to two
	// seconds, one from each rounding (3s for a 2s window, or for a delay
	// of 1.02s).
	RoundUp Rounding = iota

	// RoundDown rounds down to a whole second (a floor), as ulule/limiter
	// and sethvargo/go-limiter do: the instant sent can be before the true
	// one, and on a refusal it can equal the Date, as if the quota were
	// available now.
	RoundDown
)

// Defaults of the Config fields that have one.
const (
	defaultDripBytes    = 65536
	defaultStreamEvents = 10
)

// Units of quota.
const (
	unitRequests   = "requests"
	unitBytes      = "content-bytes"
	unitConcurrent = "concurrent-requests"
)

// policy is a validated Policy with its defaults filled in.
type policy struct {
	name      string
	algorithm Algorithm
	quota     int64
	window    time.Duration
	unit      string
	burst     int64 // LeakyBucket only
	partition func(*http.Request) string
}

// policies validates and normalises cfg.Policies. Invalid policies are
// programmer errors, so it panics on them.
func policies(cfg Config) []policy {
	ps := make([]policy, 0, len(cfg.Policies))
	for i, p := range cfg.Policies {
		q := policy{
			name:      p.Name,
			algorithm: p.Algorithm,
			quota:     p.Quota,
			window:    p.Window,
			unit:      p.Unit,
			partition: p.Partition,
		}
		if q.name == "" {
			q.name = "default"
		}
		if q.algorithm == "" {
			q.algorithm = FixedWindow
		}
		switch q.algorithm {
		case FixedWindow, FixedWindowFromFirst, SlidingLog, SlidingWindow, SlidingWindowRounded, TokenBucket, LeakyBucket:
			if q.window <= 0 {
				panic(fmt.Sprintf("ratelimittest: Policies[%d] (%q): Window %v must be positive", i, q.name, q.window))
			}
			if q.unit == "" {
				q.unit = unitRequests
			}
			if q.unit == unitConcurrent {
				panic(fmt.Sprintf("ratelimittest: Policies[%d] (%q): Unit %q is Concurrency's, not %s's", i, q.name, q.unit, q.algorithm))
			}
		case Concurrency:
			q.window = 0
			if q.unit == "" {
				q.unit = unitConcurrent
			}
			if q.unit != unitConcurrent {
				// Advertised, it would state a quota of another unit
				// than the one enforced.
				panic(fmt.Sprintf("ratelimittest: Policies[%d] (%q): a Concurrency policy's Unit must be empty or %q, not %q", i, q.name, unitConcurrent, q.unit))
			}
		default:
			panic(fmt.Sprintf("ratelimittest: Policies[%d] (%q): unknown Algorithm %q", i, q.name, q.algorithm))
		}
		if q.quota < 0 {
			panic(fmt.Sprintf("ratelimittest: Policies[%d] (%q): negative Quota %d", i, q.name, q.quota))
		}
		if q.algorithm == LeakyBucket {
			if p.Burst < 0 {
				panic(fmt.Sprintf("ratelimittest: Policies[%d] (%q): negative Burst %d", i, q.name, p.Burst))
			}
			if p.Burst > MaxBurst {
				panic(fmt.Sprintf("ratelimittest: Policies[%d] (%q): Burst %d above MaxBurst %d", i, q.name, p.Burst, MaxBurst))
			}
			q.burst = p.Burst
		}
		ps = append(ps, q)
	}
	return ps
}

// bodySize is cfg.BodySize with its default applied.
func bodySize(cfg Config) int {
	switch {
	case cfg.BodySize == 0:
		return 2
	case cfg.BodySize < 0:
		return 0
	}
	return cfg.BodySize
}

// streamFraming is the bytes an event adds to its data: "data: " and "\n\n".
const streamFraming = len("data: \n\n")

// streaming reports whether the default Next of cfg streams its body.
func streaming(cfg Config) bool { return cfg.Next == nil && cfg.Stream > 0 }

// streamEvents is cfg.StreamEvents with its default applied.
func streamEvents(cfg Config) int {
	if cfg.StreamEvents <= 0 {
		return defaultStreamEvents
	}
	return cfg.StreamEvents
}

// contentSize is what an admitted request costs a "content-bytes" policy
// at admission: the size of the body of the default Next, streamed or not,
// or BodySize with a custom Next. It saturates at the largest int.
func contentSize(cfg Config) int {
	n := bodySize(cfg)
	if streaming(cfg) {
		events := streamEvents(cfg)
		if n > math.MaxInt-streamFraming || events > math.MaxInt/(n+streamFraming) {
			return math.MaxInt
		}
		return events * (n + streamFraming)
	}
	return n
}

// cost reports what a request costs p at admission.
func (p *policy) cost(bodySize int) int64 {
	if p.unit == unitBytes && p.algorithm != Concurrency {
		return int64(bodySize)
	}
	return 1
}
