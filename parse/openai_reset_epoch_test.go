package parse

import (
	"net/http"
	"testing"
	"time"
)

// A bare number in an OpenAI-style reset was read as seconds whatever its
// size: the epoch 1796346090 some OpenAI-compatible servers send, 90 s
// after the Date below, was a reset 56 years away, and the same instant
// in milliseconds unknown. A bare number follows the magnitude rule, as
// X-RateLimit-Reset's does: below 1e9 it is still seconds (Azure's "55").
func TestOpenAIResetBareEpoch(t *testing.T) {
	now := time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC) // 1796346000
	for _, tt := range []struct {
		reset string
		want  time.Duration
	}{
		{"1796346090", 90 * time.Second},
		{"1796346090.5", 90*time.Second + 500*time.Millisecond},
		{"1796346090000", 90 * time.Second},
		{"1796346090000000", 90 * time.Second},
		{"1796345990", 0}, // past
		{"55", 55 * time.Second},
		{"1.5", 1500 * time.Millisecond},
		{"999999999", 999999999 * time.Second},
		{"1000000000000000000", -1},
		{"1m51.535s", 111535 * time.Millisecond},
	} {
		for _, unit := range []string{"Requests", "Tokens"} {
			h := http.Header{
				"Date":                          {"Fri, 04 Dec 2026 01:00:00 GMT"},
				"X-Ratelimit-Limit-" + unit:     {"100"},
				"X-Ratelimit-Remaining-" + unit: {"5"},
				"X-Ratelimit-Reset-" + unit:     {tt.reset},
			}
			quick, general := readBothPaths(h, now)
			var r Reader
			read, _ := r.Read(h, now, time.Time{})
			for i, got := range [][]Quota{Header(h, now), read, quick, general} {
				if len(got) != 1 || got[0].Reset != tt.want {
					t.Errorf("X-RateLimit-Reset-%s %q, by %s: %v, want one quota resetting in %v",
						unit, tt.reset, [...]string{"Header", "a Reader", "the fast path", "the general path"}[i], got, tt.want)
					break
				}
			}
		}
		// As X-RateLimit-Reset reads the same number.
		if _, _, st := decimal(tt.reset); st == numOK {
			h := http.Header{
				"Date":                  {"Fri, 04 Dec 2026 01:00:00 GMT"},
				"X-Ratelimit-Limit":     {"100"},
				"X-Ratelimit-Remaining": {"5"},
				"X-Ratelimit-Reset":     {tt.reset},
			}
			if got := Header(h, now); len(got) != 1 || got[0].Reset != tt.want {
				t.Errorf("X-RateLimit-Reset %q: %v, want one quota resetting in %v, as the OpenAI reset", tt.reset, got, tt.want)
			}
		}
	}
}

// A clock before 2001 (a testing/synctest bubble's starts in 2000) sends
// epoch resets below 1e9, which the magnitude rule read as delta seconds:
// 946684860, a minute after the Date below, was a reset of 30 years. A
// bare number within a year of the instant resets are measured from is an
// instant; a delta below 1e9 is read as before.
func TestEpochResetBefore2001(t *testing.T) {
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) // 946684800
	for _, tt := range []struct {
		reset string
		want  time.Duration
	}{
		{"946684860", time.Minute},
		{"946684800", 0},
		{"60", time.Minute},
		{"915000000", 915000000 * time.Second}, // more than a year before: a delta
	} {
		for _, name := range []string{"X-Ratelimit-Reset", "X-Ratelimit-Reset-Requests"} { // the OpenAI family's too
			h := http.Header{
				"Date":                  {"Sat, 01 Jan 2000 00:00:00 GMT"},
				"X-Ratelimit-Limit":     {"10"},
				"X-Ratelimit-Remaining": {"5"},
				name:                    {tt.reset},
			}
			if name != "X-Ratelimit-Reset" {
				h = http.Header{"Date": h["Date"], "X-Ratelimit-Limit-Requests": {"10"}, "X-Ratelimit-Remaining-Requests": {"5"}, name: {tt.reset}}
			}
			quick, general := readBothPaths(h, now)
			for _, qs := range [][]Quota{quick, general, Header(h, now)} {
				if len(qs) != 1 || qs[0].Reset != tt.want {
					t.Errorf("%s %s with the Date of 2000: %+v; want a reset of %v", name, tt.reset, qs, tt.want)
				}
			}
		}
	}
}

// A device whose clock was never set sends a Date of 1970 and deltas: a
// reset of 60 stays 60 s, not an instant of 1970 already past.
func TestDeltaResetWithDateOf1970(t *testing.T) {
	now := time.Unix(86400, 0).UTC() // a day of uptime
	h := http.Header{
		"Date":                  {now.Format(http.TimeFormat)},
		"X-Ratelimit-Limit":     {"10"},
		"X-Ratelimit-Remaining": {"5"},
		"X-Ratelimit-Reset":     {"60"},
	}
	quick, general := readBothPaths(h, now)
	for _, qs := range [][]Quota{quick, general, Header(h, now)} {
		if len(qs) != 1 || qs[0].Reset != time.Minute {
			t.Errorf("X-RateLimit-Reset 60 with the Date of a clock never set: %+v; want a reset of 1m0s", qs)
		}
	}
}
