package ratelimittest

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// state is what a response says about one policy, as advertised.
type state struct {
	name      string
	unit      string
	quota     int64         // advertised quota
	window    time.Duration // zero for Concurrency
	remaining int64         // advertised available quota
	honest    int64         // the requests the enforced available quota admits, to choose the policy legacy dialects describe
	reset     time.Duration // effective window; a nominal second for Concurrency
	hasReset  bool          // false for Concurrency: IETF then omits t
	full      time.Duration // until the quota is whole again
	end       time.Duration // until the end of the current aligned window
	hasEnd    bool          // false without aligned windows: HTTPRate then sends reset
	key       string        // partition key
	keyed     bool          // whether the policy is partitioned
}

// nominalReset is the reset advertised for a Concurrency policy by the
// dialects that cannot omit it, and the Retry-After of a request refused
// until another one finishes: the server cannot know when that will be.
const nominalReset = time.Second

// writeFields adds to h the rate-limit fields of cfg's dialect describing
// states at now. With no states it adds nothing.
func writeFields(h http.Header, cfg *Config, now time.Time, states []state) {
	if len(states) == 0 {
		return
	}
	d, malformed := cfg.Dialect, cfg.Malformed
	if d == IETF {
		writeIETF(h, states, malformed)
		return
	}
	s := states[describe(states)]
	limit := strconv.FormatInt(s.quota, 10)
	remaining := strconv.FormatInt(s.remaining, 10)
	reset := strconv.FormatInt(ceilSeconds(s.reset), 10)
	resetAt := roundUnix(now.Add(s.reset), cfg.ResetRounding)
	if d == HTTPRate && s.hasEnd {
		resetAt = roundUnix(now.Add(s.end), cfg.ResetRounding)
	}
	epoch := strconv.FormatInt(resetAt, 10)
	date := fieldDate(time.Unix(resetAt, 0), cfg.UTCDates)
	// The fields of Draft06 and Draft07 are Structured Fields, whose
	// Integers have at most 15 digits (RFC 9651 §3.3.1): a larger one is stated as the
	// largest, as a parser fails on it, dropping the field.
	sfLimit, sfRemaining, sfReset := sfInt(s.quota), sfInt(s.remaining), sfInt(ceilSeconds(s.reset))
	policy := sfLimit
	if s.window > 0 {
		policy += ";w=" + sfInt(windowSeconds(s.window))
	}
	used := strconv.FormatInt(max(s.quota-s.remaining, 0), 10)
	full := s.full.String()
	if malformed {
		// Each value breaks the number or date grammar of its field.
		limit, remaining, reset, epoch, date, used, full = "-"+limit, "NaN", "1e3", "1e3", "1e3", "-"+used, "1d"
		sfLimit, sfRemaining, sfReset = limit, remaining, reset
		policy = limit + ";w=0"
	}
	switch d {
	case Draft06:
		h.Set("RateLimit-Limit", sfLimit)
		h.Set("RateLimit-Remaining", sfRemaining)
		h.Set("RateLimit-Reset", sfReset)
		h.Set("RateLimit-Policy", policy)
	case Draft07:
		h.Set("RateLimit", "limit="+sfLimit+", remaining="+sfRemaining+", reset="+sfReset)
		h.Set("RateLimit-Policy", policy)
	case XRateLimitEpoch, HTTPRate:
		h.Set("X-RateLimit-Limit", limit)
		h.Set("X-RateLimit-Remaining", remaining)
		h.Set("X-RateLimit-Reset", epoch)
	case XRateLimitDate:
		h.Set("X-RateLimit-Limit", limit)
		h.Set("X-RateLimit-Remaining", remaining)
		h.Set("X-RateLimit-Reset", date)
	case XRateLimitDelta:
		h.Set("X-RateLimit-Limit", limit)
		h.Set("X-RateLimit-Remaining", remaining)
		h.Set("X-RateLimit-Reset", reset)
	case GitHub:
		h.Set("X-RateLimit-Limit", limit)
		h.Set("X-RateLimit-Remaining", remaining)
		h.Set("X-RateLimit-Used", used)
		h.Set("X-RateLimit-Reset", epoch)
		h.Set("X-RateLimit-Resource", "core")
	case OpenAI:
		h.Set("X-RateLimit-Limit-Requests", limit)
		h.Set("X-RateLimit-Remaining-Requests", remaining)
		h.Set("X-RateLimit-Reset-Requests", full)
	}
}

// writeIETF adds the draft-11 RateLimit-Policy and RateLimit fields, one
// item per state. Malformed items use Token names and a negative r.
func writeIETF(h http.Header, states []state, malformed bool) {
	var policy, current strings.Builder
	for i, s := range states {
		if i > 0 {
			policy.WriteString(", ")
			current.WriteString(", ")
		}
		name := sfString(s.name)
		r := sfInt(s.remaining)
		if malformed {
			name, r = s.name, "-1"
		}
		policy.WriteString(name)
		policy.WriteString(";q=")
		policy.WriteString(sfInt(s.quota))
		if s.unit != unitRequests {
			policy.WriteString(";qu=")
			policy.WriteString(sfString(s.unit))
		}
		if s.window > 0 {
			policy.WriteString(";w=")
			policy.WriteString(sfInt(windowSeconds(s.window)))
		}
		current.WriteString(name)
		current.WriteString(";r=")
		current.WriteString(r)
		if s.hasReset {
			current.WriteString(";t=")
			current.WriteString(sfInt(ceilSeconds(s.reset)))
		}
		if s.keyed {
			pk := ";pk=:" + base64.StdEncoding.EncodeToString([]byte(s.key)) + ":"
			policy.WriteString(pk)
			current.WriteString(pk)
		}
	}
	h.Set("RateLimit-Policy", policy.String())
	h.Set("RateLimit", current.String())
}

// describe reports which state the single-policy dialects describe: the one
// whose enforced remaining quota admits the fewest requests (a
// content-bytes policy's counts bytes) and, among those, the longest reset;
// the first of equals.
func describe(states []state) int {
	best := 0
	for i, s := range states[1:] {
		b := states[best]
		if s.honest < b.honest || s.honest == b.honest && s.reset > b.reset {
			best = i + 1
		}
	}
	return best
}

// maxSFInteger is the largest Structured Fields Integer: 15 digits (RFC
// 9651 §3.3.1).
const maxSFInteger = 999_999_999_999_999

// sfInt formats n as a Structured Fields Integer, within its 15 digits: a
// larger n is the largest (a smaller, the least), which a parser reads,
// where it fails on more digits and drops the field.
func sfInt(n int64) string {
	return strconv.FormatInt(min(max(n, -maxSFInteger), maxSFInteger), 10)
}

// sfString formats s as a Structured Fields String (RFC 9651 §3.3.3).
func sfString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			b.WriteByte('?') // not representable in a String
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ceilSeconds reports d in whole seconds, rounded up; zero if d <= 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}

// windowSeconds is the IETF w of a window: whole seconds, rounded up, at least 1.
func windowSeconds(d time.Duration) int64 {
	return max(ceilSeconds(d), 1)
}

// delaySeconds is a Retry-After delay: whole seconds, rounded up, at least 1.
func delaySeconds(d time.Duration) string {
	return strconv.FormatInt(max(ceilSeconds(d), 1), 10)
}

// ceilUnix reports t in Unix seconds, rounded up, so that it is never
// before t and never before the Date header (t truncated) of the response.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() != 0 {
		s++
	}
	return s
}

// roundUnix reports t in Unix seconds, rounded as r says.
func roundUnix(t time.Time, r Rounding) int64 {
	if r == RoundDown {
		return t.Unix()
	}
	return ceilUnix(t)
}

// httpDate formats t for the Date header: an IMF-fixdate (RFC 9110
// §5.6.7), truncated to a whole second.
func httpDate(t time.Time) string {
	return t.UTC().Format(http.TimeFormat)
}

// fieldDate formats t for the dates of the rate-limit fields and
// Retry-After: an IMF-fixdate, or with utc the same ending in "UTC"
// (time.RFC1123 in UTC), which RFC 9110 §5.6.7 does not allow.
func fieldDate(t time.Time, utc bool) string {
	if utc {
		return t.UTC().Format(time.RFC1123)
	}
	return httpDate(t)
}
