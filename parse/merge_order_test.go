package parse

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
)

// An X-RateLimit-* quota that matched two IETF quotas alike (same unit,
// limit and remaining, no conflicting window or reset) merged into the
// policy listed first: "a", with no window, learned the legacy reset of 1s
// in one order, and "b", whose t=1 it matches exactly, in the other. The
// one that agrees on most of what both know is chosen now.
func TestCrossFamilyMergeOrderIndependent(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	mk := func(policy, limit string) http.Header {
		return http.Header{
			"Ratelimit-Policy":      {policy},
			"Ratelimit":             {limit},
			"X-Ratelimit-Limit":     {"5"},
			"X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Reset":     {"1"},
		}
	}
	set := func(qs []Quota) string {
		var s []string
		for _, q := range qs {
			s = append(s, formatQuota(q))
		}
		sort.Strings(s)
		return strings.Join(s, "\n")
	}
	h1 := mk(`"a";q=5, "b";q=5;w=1`, `"a";r=0, "b";r=0;t=1`)
	h2 := mk(`"b";q=5;w=1, "a";q=5`, `"b";r=0;t=1, "a";r=0`)
	q1, q2 := set(Header(h1, now)), set(Header(h2, now))
	if q1 != q2 {
		t.Errorf("the same two policies in two orders read differently:\n%v:\n%s\n%v:\n%s", h1, q1, h2, q2)
	}
}

// Of two policies a legacy quota matches alike, neither knowing its reset,
// the one of the first name learns it, in either order.
func TestCrossFamilyMergeTieByName(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, h := range []http.Header{
		{"Ratelimit-Policy": {`"a";q=5, "b";q=5`}, "Ratelimit": {`"a";r=0, "b";r=0`}},
		{"Ratelimit-Policy": {`"b";q=5, "a";q=5`}, "Ratelimit": {`"b";r=0, "a";r=0`}},
	} {
		h.Set("X-Ratelimit-Limit", "5")
		h.Set("X-Ratelimit-Remaining", "0")
		h.Set("X-Ratelimit-Reset", "1")
		for _, q := range Header(h, now) {
			if want := map[string]time.Duration{"a": time.Second, "b": -1}[q.Policy]; q.Reset != want {
				t.Errorf("%v: policy %q reset %v, want %v", h, q.Policy, q.Reset, want)
			}
		}
	}
}

// Of quotas a quota of another family matches alike whose names are equal
// too (a legacy limit list's items are unnamed), which learns its reset
// does not hang on their order either: the shortest window does.
func TestCrossFamilyMergeTieOfEqualNames(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, list := range []string{"10, 10;w=60, 10;w=3600", "10, 10;w=3600, 10;w=60"} {
		h := http.Header{
			"X-Ratelimit-Limit": {list},
			"Ratelimit-Limit":   {"10"},
			"Ratelimit-Reset":   {"7"},
		}
		for _, q := range Header(h, now) {
			if want := map[time.Duration]time.Duration{time.Minute: 7 * time.Second, time.Hour: -1}[q.Window]; q.Reset != want {
				t.Errorf("%q: the quota of window %v has reset %v, want %v", list, q.Window, q.Reset, want)
			}
		}
	}
}
