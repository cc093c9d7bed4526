package parse

import (
	"math/rand/v2"
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

// Which of two policies a family's quotas join does not hang on the order
// of that family's members either: added greedily as listed, the first
// legacy item took policy "a" and the next was left "b", so that which
// learned the 1-minute window and which the day hung on the legacy
// list's order.
func TestCrossFamilyMergeOrderOfJoiningMembers(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var got []string
	for _, list := range []string{"5, 10;w=60, 10;w=86400", "5, 10;w=86400, 10;w=60"} {
		h := http.Header{
			"Ratelimit-Policy":  {`"a";q=10, "b";q=10`},
			"X-Ratelimit-Limit": {list},
			"Ratelimit-Limit":   {"10"},
			"Ratelimit-Reset":   {"100"},
		}
		got = append(got, formatQuotas(Header(h, now)))
	}
	if got[0] != got[1] {
		t.Errorf("the same legacy items in two orders read differently:\n   %s\nvs\n   %s", got[0], got[1])
	}
}

// Generated headers whose list fields' members are permuted: the set of
// quotas must not change.
func TestCrossFamilyMergeOrderGenerated(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	fails := 0
	for iter := 0; iter < 20000 && fails < 3; iter++ {
		// IETF policies, possibly without windows; names from a small set.
		var pols, lims []string
		names := []string{"a", "b", "c"}
		for _, n := range names[:1+rng.IntN(3)] {
			p := `"` + n + `";q=10` + pick("", ";w=60", ";w=3600")
			pols = append(pols, p)
			if rng.IntN(2) == 0 {
				lims = append(lims, `"`+n+`";r=`+pick("3", "10")+pick("", ";t=7", ";t=100"))
			}
		}
		var items []string
		for range 1 + rng.IntN(3) {
			items = append(items, "10;w="+pick("60", "3600", "86400"))
		}
		cur := pick("5", "10", "10;w=60")
		h := func(pols, lims, items []string) http.Header {
			h := http.Header{
				"Ratelimit-Policy":  {strings.Join(pols, ", ")},
				"X-Ratelimit-Limit": {cur + ", " + strings.Join(items, ", ")},
			}
			if len(lims) > 0 {
				h["Ratelimit"] = []string{strings.Join(lims, ", ")}
			}
			if rng.IntN(2) == 0 {
				h["Ratelimit-Limit"] = []string{"10"}
				h["Ratelimit-Reset"] = []string{pick("7", "100")}
			}
			return h
		}
		h0 := h(pols, lims, items)
		want := formatQuotas(Header(h0, now))
		for range 6 {
			p2 := append([]string(nil), pols...)
			l2 := append([]string(nil), lims...)
			i2 := append([]string(nil), items...)
			rng.Shuffle(len(p2), func(i, j int) { p2[i], p2[j] = p2[j], p2[i] })
			rng.Shuffle(len(l2), func(i, j int) { l2[i], l2[j] = l2[j], l2[i] })
			rng.Shuffle(len(i2), func(i, j int) { i2[i], i2[j] = i2[j], i2[i] })
			h1 := h0.Clone()
			h1["Ratelimit-Policy"] = []string{strings.Join(p2, ", ")}
			if len(l2) > 0 {
				h1["Ratelimit"] = []string{strings.Join(l2, ", ")}
			}
			h1["X-Ratelimit-Limit"] = []string{cur + ", " + strings.Join(i2, ", ")}
			if got := formatQuotas(Header(h1, now)); got != want {
				t.Errorf("%v\n   %s\nvs %v\n   %s", h0, want, h1, got)
				fails++
				break
			}
		}
	}
}

// Which of the items "10;w=60, 10;w=3600" learns the current limit's
// remaining count and reset does not hang on their order when the current
// limit and the items are of one family either: the current quota merged
// into the first item listed with an equal limit.
func TestLegacyCurrentLimitMergeOrder(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		base  http.Header
		field string
		a, b  string
	}{
		{"envoy list", http.Header{"X-Ratelimit-Remaining": {"3"}, "X-Ratelimit-Reset": {"7"}},
			"X-Ratelimit-Limit", "10, 10;w=60, 10;w=3600", "10, 10;w=3600, 10;w=60"},
		{"unnamed policy + triplet", http.Header{"Ratelimit-Limit": {"10"}, "Ratelimit-Remaining": {"3"}, "Ratelimit-Reset": {"7"}},
			"Ratelimit-Policy", "10;w=60, 10;w=3600", "10;w=3600, 10;w=60"},
		{"unnamed policy + draft-07 dict", http.Header{"Ratelimit": {"limit=10, remaining=3, reset=7"}},
			"Ratelimit-Policy", "10;w=60, 10;w=3600", "10;w=3600, 10;w=60"},
	} {
		ha, hb := tc.base.Clone(), tc.base.Clone()
		ha[tc.field], hb[tc.field] = []string{tc.a}, []string{tc.b}
		if ga, gb := formatQuotas(Header(ha, now)), formatQuotas(Header(hb, now)); ga != gb {
			t.Errorf("%s: %s %q:\n   %s\nbut %q:\n   %s", tc.name, tc.field, tc.a, ga, tc.b, gb)
		}
	}
}
