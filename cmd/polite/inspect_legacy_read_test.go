package main

import (
	"net/http"
	"testing"
)

// The legacy fields inspect calls not valid numbers, "which clients
// ignore", are those parse does not read: a limit of ",10" is read as 10
// (an empty list member skipped), while "10, 20" (two limits, no window to
// tell them apart) and a count past int64 are not.
func TestInspectBadLegacyFieldsAsParseReads(t *testing.T) {
	for _, c := range []struct {
		name, value string
		bad         bool
	}{
		{"X-RateLimit-Limit", ",10", false},
		{"X-RateLimit-Limit", "10, 20", true},
		{"X-RateLimit-Remaining", "12345678901234567890123", true},
		{"X-RateLimit-Limit", "100;w=60", false},
		{"X-RateLimit-Remaining", "abc", true},
		{"RateLimit-Reset", "30", false},
		{"X-RateLimit-Used", "x", true},
	} {
		h := http.Header{c.name: {c.value}}
		if got := len(badLegacyFields(h)) > 0; got != c.bad {
			t.Errorf("%s: %q: reported not valid %v, want %v", c.name, c.value, got, c.bad)
		}
	}
}
