package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// algorithms and dialects are the names the -algorithm and -dialect flags
// accept, checked here because ratelimittest.NewHandler panics on others.
var (
	algorithms = []ratelimittest.Algorithm{
		ratelimittest.FixedWindow, ratelimittest.FixedWindowFromFirst, ratelimittest.SlidingLog,
		ratelimittest.SlidingWindow, ratelimittest.SlidingWindowRounded, ratelimittest.TokenBucket,
		ratelimittest.LeakyBucket, ratelimittest.Concurrency,
	}
	dialects = []ratelimittest.Dialect{
		ratelimittest.IETF, ratelimittest.Draft06, ratelimittest.Draft07,
		ratelimittest.XRateLimitEpoch, ratelimittest.XRateLimitDelta, ratelimittest.XRateLimitDate,
		ratelimittest.GitHub, ratelimittest.OpenAI, ratelimittest.HTTPRate,
		ratelimittest.RetryAfterOnly, ratelimittest.Bare429,
	}
)

// maxSFInteger is the largest Structured Fields Integer (RFC 9651
// §3.3.1: 15 digits). A quota above it makes q= and r= values that no
// draft-11 reader accepts, and the whole field is ignored.
const maxSFInteger = 999_999_999_999_999

// policyFlags are the flags that describe the one policy of a test server.
type policyFlags struct {
	algorithm string
	dialect   string
	quota     int64
	window    time.Duration
	burst     int64
}

// register adds -algorithm, -dialect, -quota and -window to fs, with the
// given default quota and window.
func (p *policyFlags) register(fs *flag.FlagSet, quota int64, window time.Duration) {
	fs.StringVar(&p.algorithm, "algorithm", string(ratelimittest.FixedWindow), "counting rule of the server's policy: "+joinNames(algorithms))
	fs.StringVar(&p.dialect, "dialect", string(ratelimittest.IETF), "rate-limit header fields the server sends: "+joinNames(dialects))
	fs.Int64Var(&p.quota, "quota", quota, "requests the server admits per window (for concurrency: at once), at most 999999999999999 (15 digits, as a Structured Fields Integer)")
	fs.DurationVar(&p.window, "window", window, "window of the quota, whole seconds (ignored by concurrency)")
	fs.Int64Var(&p.burst, "burst", 0, "requests a leaky-bucket tolerates beyond its rate, served at once (ignored by the others); below 999999999999999")
}

// config returns the ratelimittest.Config the flags describe, or a usage
// error if they name an unknown algorithm or dialect or an invalid quota.
func (p *policyFlags) config() (ratelimittest.Config, error) {
	alg := ratelimittest.Algorithm(p.algorithm)
	if !slices.Contains(algorithms, alg) {
		return ratelimittest.Config{}, usagef("unknown -algorithm %q; want one of %s", p.algorithm, joinNames(algorithms))
	}
	d := ratelimittest.Dialect(p.dialect)
	if !slices.Contains(dialects, d) {
		return ratelimittest.Config{}, usagef("unknown -dialect %q; want one of %s", p.dialect, joinNames(dialects))
	}
	if p.quota < 1 || p.quota > maxSFInteger {
		return ratelimittest.Config{}, usagef("-quota must be between 1 and %d, got %d", int64(maxSFInteger), p.quota)
	}
	if p.burst < 0 || p.burst > ratelimittest.MaxBurst {
		return ratelimittest.Config{}, usagef("-burst must be between 0 and %d, got %d", int64(ratelimittest.MaxBurst), p.burst)
	}
	if alg == ratelimittest.LeakyBucket && p.burst >= maxSFInteger {
		// A leaky bucket's r counts the burst and one more, which must
		// fit a Structured Fields Integer, as -quota does.
		return ratelimittest.Config{}, usagef("-burst of a leaky bucket must be below %d (its r counts the burst and one more), got %d", int64(maxSFInteger), p.burst)
	}
	if alg != ratelimittest.Concurrency && p.window <= 0 {
		return ratelimittest.Config{}, usagef("-window must be positive, got %v", p.window)
	}
	if alg != ratelimittest.Concurrency && p.window%time.Second != 0 {
		// Draft-11's w, and the resets of most dialects, are whole
		// seconds: the server would state a window it does not enforce
		// (-window 1500ms -quota 3 enforced 2 a second and stated
		// q=3;w=2), and a client that obeys it would look slow.
		return ratelimittest.Config{}, usagef("-window must be whole seconds, as the fields state it, got %v", p.window)
	}
	return ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Algorithm: alg, Quota: p.quota, Window: p.window, Burst: p.burst}},
		Dialect:  d,
	}, nil
}

// describe says in a few words what the policy is, for humans.
func (p *policyFlags) describe() string {
	if ratelimittest.Algorithm(p.algorithm) == ratelimittest.Concurrency {
		return fmt.Sprintf("concurrency %d at once, %s fields", p.quota, p.dialect)
	}
	if ratelimittest.Algorithm(p.algorithm) == ratelimittest.LeakyBucket {
		return fmt.Sprintf("%s %d per %v burst %d, %s fields", p.algorithm, p.quota, p.window, p.burst, p.dialect)
	}
	return fmt.Sprintf("%s %d per %v, %s fields", p.algorithm, p.quota, p.window, p.dialect)
}

// joinNames lists names separated by commas.
func joinNames[T ~string](names []T) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}
