package parse

import (
	"net/http"
	"testing"
	"time"
)

// readBothPaths reads h by the fast path and by the general path.
func readBothPaths(h http.Header, now time.Time) (quick, general []Quota) {
	quick, _ = read(nil, h, now, time.Time{}, nil, false, true)
	general, _ = read(nil, h, now, time.Time{}, nil, false, false)
	return quick, general
}

// A legacy ";w=" window (draft-03 to 06, Docker, XIQ, Envoy) is an Integer
// of seconds: the unnamed RateLimit-Policy reader already rejects
// "100;w=0.5", and draft-11 §3.1.3 says sub-second precision is not
// supported. The limit-field reader instead accepted any decimal, down to
// a window of one nanosecond, which made the stated pace (q/w) unbounded.
func TestLegacyWindowWholeSeconds(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		h    http.Header
	}{
		{"RateLimit-Limit", http.Header{
			"Ratelimit-Limit": {"100;w=0.000000001"}, "Ratelimit-Remaining": {"5"}}},
		{"RateLimit-Limit half second", http.Header{
			"Ratelimit-Limit": {"100;w=0.5"}, "Ratelimit-Remaining": {"5"}}},
		{"Envoy item", http.Header{
			"X-Ratelimit-Limit": {"10, 10;w=0.000000001"}, "X-Ratelimit-Remaining": {"5"}}},
		{"Docker remaining", http.Header{
			"Ratelimit-Remaining": {"20;w=0.000000001"}}},
	}
	for _, c := range cases {
		q, g := readBothPaths(c.h, now)
		for _, got := range [][]Quota{q, g} {
			for _, x := range got {
				if x.Window != 0 && (x.Window < time.Second || x.Window%time.Second != 0) {
					t.Errorf("%s: %v: window %v, want 0 (unknown) or whole seconds, as RateLimit-Policy \"100;w=0.5\" is read",
						c.name, c.h, x.Window)
				}
			}
		}
	}
}

// HubSpot's Interval-Milliseconds is a whole number of milliseconds
// (10000); a decimal one yielded a window of a nanosecond.
func TestHubSpotIntervalBelowMillisecond(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{
		"X-Hubspot-Ratelimit-Max":                   {"100"},
		"X-Hubspot-Ratelimit-Remaining":             {"99"},
		"X-Hubspot-Ratelimit-Interval-Milliseconds": {"0.000001"},
	}
	for _, x := range Header(h, now) {
		if x.Window != 0 && x.Window < time.Millisecond {
			t.Errorf("window %v from Interval-Milliseconds 0.000001, want 0 (unknown) or at least 1ms", x.Window)
		}
	}
}

// OpenAI-family resets are a Go duration or a bare number (doc.go). A
// bare number of seconds too long for a Duration saturated to 292 years,
// while the same value with its unit ("9223372037s", which
// time.ParseDuration rejects as overflowing) and a bare number of 19
// digits were unknown. A bare number follows the magnitude rule now, as
// X-RateLimit-Reset's: from 1e9 it is an instant, read as that field
// reads it; with its unit it is still a duration, unknown when too long.
func TestOpenAIResetOverflow(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	readReset := func(limit, reset, v string) time.Duration {
		h := http.Header{limit: {"10"}, reset: {v}}
		q, g := readBothPaths(h, now)
		if len(q) != 1 || len(g) != 1 || q[0].Reset != g[0].Reset {
			t.Fatalf("%s %q: %v / %v", reset, v, q, g)
		}
		return q[0].Reset
	}
	if got := readReset("X-Ratelimit-Limit-Requests", "X-Ratelimit-Reset-Requests", "9223372037s"); got != -1 {
		t.Errorf(`reset "9223372037s" = %v, want -1 (unknown), as time.ParseDuration rejects it`, got)
	}
	for _, v := range []string{"9223372037", "999999999999999999", "9999999999999999999"} {
		got := readReset("X-Ratelimit-Limit-Requests", "X-Ratelimit-Reset-Requests", v)
		if want := readReset("X-Ratelimit-Limit", "X-Ratelimit-Reset", v); got != want {
			t.Errorf("reset %q = %v, but X-RateLimit-Reset %q = %v; a bare number follows the magnitude rule in both", v, got, v, want)
		}
	}
}
