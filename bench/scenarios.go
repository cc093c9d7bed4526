package main

import (
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// A scenario is one kind of rate-limited server. Every client run gets a
// fresh server built from it, so no client inherits another's counters.
type scenario struct {
	name      string
	about     string // one line for the table heading
	dialect   ratelimittest.Dialect
	algorithm ratelimittest.Algorithm

	// honest reports whether the server states its quota before refusing:
	// a client that listens needs no refusal at all. The others (Retry-After
	// only, bare 429) can only be discovered by being refused.
	honest bool
}

// scenarios are the servers of a run, in the order they are printed.
var scenarios = []scenario{
	{
		name:      "fixed-window",
		about:     "fixed window, IETF draft-11 RateLimit-Policy and RateLimit",
		dialect:   ratelimittest.IETF,
		algorithm: ratelimittest.FixedWindow,
		honest:    true,
	},
	{
		name:      "sliding-log",
		about:     "sliding log, IETF draft-11 RateLimit-Policy and RateLimit",
		dialect:   ratelimittest.IETF,
		algorithm: ratelimittest.SlidingLog,
		honest:    true,
	},
	{
		name:      "token-bucket",
		about:     "token bucket, legacy X-RateLimit-* with the reset in delta seconds",
		dialect:   ratelimittest.XRateLimitDelta,
		algorithm: ratelimittest.TokenBucket,
		honest:    true,
	},
	{
		name:      "github",
		about:     "fixed window, GitHub's X-Ratelimit-* with an epoch reset, refusals without Retry-After",
		dialect:   ratelimittest.GitHub,
		algorithm: ratelimittest.FixedWindow,
		honest:    true,
	},
	{
		name:      "retry-after",
		about:     "fixed window, no quota fields, refusals carry Retry-After",
		dialect:   ratelimittest.RetryAfterOnly,
		algorithm: ratelimittest.FixedWindow,
	},
	{
		name:      "bare-429",
		about:     "fixed window, no rate-limit fields at all, not even Retry-After",
		dialect:   ratelimittest.Bare429,
		algorithm: ratelimittest.FixedWindow,
	},
}

// config returns the server configuration of s for one quota per window,
// serving each admitted request after latency.
func (s scenario) config(quota int64, window, latency time.Duration) ratelimittest.Config {
	return ratelimittest.Config{
		Policies: []ratelimittest.Policy{{
			Name:      "api",
			Algorithm: s.algorithm,
			Quota:     quota,
			Window:    window,
		}},
		Dialect: s.dialect,
		Latency: latency,
	}
}
