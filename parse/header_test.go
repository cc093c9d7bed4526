package parse

import (
	"fmt"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHeaderClockSkew(t *testing.T) {
	// The server's Date is 12:00:00 and every reset points at 12:01:00.
	// The client clock is minutes off either way; only Date counts.
	h := http.Header{}
	h.Set("Date", "Sat, 01 Mar 2025 12:00:00 GMT")
	h.Set("X-RateLimit-Limit", "60")
	h.Set("X-RateLimit-Remaining", "59")
	h.Set("X-RateLimit-Reset", "1740830460")
	h.Set("Anthropic-Ratelimit-Requests-Limit", "50")
	h.Set("Anthropic-Ratelimit-Requests-Remaining", "49")
	h.Set("Anthropic-Ratelimit-Requests-Reset", "2025-03-01T12:01:00Z")
	h.Set("X-RateLimit-Requests-Limit", "40")
	h.Set("X-RateLimit-Requests-Remaining", "39")
	h.Set("X-RateLimit-Requests-Reset", "1740830460000")
	h.Set("RateLimit-Remaining", "5")
	h.Set("RateLimit-ResetTime", "Sat, 01 Mar 2025 12:01:00 GMT")
	server := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		now  time.Time
	}{
		{"in sync", server},
		{"client 5 minutes ahead", server.Add(5 * time.Minute)},
		{"client 7 minutes behind", server.Add(-7 * time.Minute)},
		{"client a day ahead", server.Add(24 * time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Header(h, tt.now)
			if len(got) != 4 {
				t.Fatalf("Header(%v) = %v, want 4 quotas", h, got)
			}
			for _, q := range got {
				if q.Reset != time.Minute {
					t.Errorf("Header(%v) at %v: %s, want reset 1m0s", h, tt.now, formatQuota(q))
				}
			}
		})
	}
}

func TestHeaderResetInUTC(t *testing.T) {
	// An HTTP-date reset that ends in "UTC" (Go's time.RFC1123 in UTC),
	// not "GMT" as RFC 9110 requires, is read as the same instant.
	h := http.Header{}
	h.Set("Date", "Sat, 01 Mar 2025 12:00:00 GMT")
	h.Set("X-RateLimit-Limit", "60")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", "Sat, 01 Mar 2025 12:00:02 UTC")
	got := Header(h, time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	if len(got) != 1 || got[0].Reset != 2*time.Second {
		t.Errorf("Header(%v) = %v, want one quota resetting in 2s", h, got)
	}
	h.Set("X-RateLimit-Reset", "Sat, 01 Mar 2025 12:00:02 utc")
	if got := Header(h, time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)); len(got) != 1 || got[0].Reset != -1 {
		t.Errorf("Header(%v) = %v, want the lower-case zone unread", h, got)
	}
}

func TestHeaderCaseInsensitive(t *testing.T) {
	// A hand-built map may hold names in any case; net/http never does.
	want := "dialect=ietf policy=\"api\" unit=requests limit=500 window=5m0s remaining=495 reset=23s"
	tests := []struct {
		name string
		h    http.Header
	}{
		{"lower case", http.Header{"ratelimit": {`"api";r=495;t=23`}, "ratelimit-policy": {`"api";q=500;w=300`}}},
		{"upper case", http.Header{"RATELIMIT": {`"api";r=495;t=23`}, "RATELIMIT-POLICY": {`"api";q=500;w=300`}}},
		{"draft spelling", http.Header{"RateLimit": {`"api";r=495;t=23`}, "RateLimit-Policy": {`"api";q=500;w=300`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatQuotas(Header(tt.h, time.Time{})); got != want {
				t.Errorf("Header(%v) = %s, want %s", tt.h, got, want)
			}
		})
	}
}

// TestLegacyListEmptyMembers checks that an empty member of a legacy
// limit list is ignored (RFC 9110 §5.6.1) whatever white space it holds:
// "100," read as 100, but "100, " and a line of a space as unknown.
func TestLegacyListEmptyMembers(t *testing.T) {
	for _, vals := range [][]string{{"100,"}, {"100, "}, {"100", ""}, {"100", " "}, {" , 100"}, {"100, ,60;w=60"}} {
		h := http.Header{"X-Ratelimit-Limit": vals, "X-Ratelimit-Remaining": {"5"}}
		qs := Header(h, time.Time{})
		if !slices.ContainsFunc(qs, func(q Quota) bool { return q.Limit == 100 && q.Remaining == 5 }) {
			t.Errorf("X-RateLimit-Limit %q: %s, want a limit of 100", vals, formatQuotas(qs))
		}
	}
}

func TestHeaderDeterministic(t *testing.T) {
	// The same field under names differing in case: lines are taken in
	// name order, whatever the map iteration order.
	h := http.Header{
		"X-Ratelimit-Limit":     {"10"},
		"x-ratelimit-limit":     {"10;w=60"},
		"X-RATELIMIT-LIMIT":     {"20;w=3600"},
		"x-ratelimit-remaining": {"3"},
	}
	want := formatQuotas(Header(h, time.Time{}))
	for range 50 {
		if got := formatQuotas(Header(h, time.Time{})); got != want {
			t.Fatalf("Header(%v) = %s, then %s", h, want, got)
		}
	}
}

func TestHeaderNoFieldsAllocatesNothing(t *testing.T) {
	h := plainHeader()
	if n := testing.AllocsPerRun(100, func() { Header(h, time.Time{}) }); n != 0 {
		t.Errorf("Header(%v) allocates %v times, want 0", h, n)
	}
	if got := Header(h, time.Time{}); got != nil {
		t.Errorf("Header(%v) = %v, want nil", h, got)
	}
}

func TestFromCache(t *testing.T) {
	tests := []struct {
		name string
		age  []string
		want bool
	}{
		{"absent", nil, false},
		{"zero", []string{"0"}, false},
		{"positive", []string{"1"}, true},
		{"leading zeros", []string{"007"}, true},
		{"zeros", []string{"000"}, false},
		{"huge", []string{"99999999999999999999999"}, true},
		{"negative", []string{"-1"}, false},
		{"decimal", []string{"1.5"}, false},
		{"garbage", []string{"soon"}, false},
		{"empty", []string{""}, false},
		{"list: first member counts", []string{"5, 0"}, true},
		{"list: first member zero", []string{"0, 5"}, false},
		{"two lines: first counts", []string{"3", "0"}, true},
		{"white space", []string{" 3 "}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.age {
				h.Add("Age", v)
			}
			if got := FromCache(h); got != tt.want {
				t.Errorf("FromCache(%v) = %v, want %v", h, got, tt.want)
			}
		})
	}
}

// plainHeader is a typical response without any rate-limit field.
func plainHeader() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", "1234")
	h.Set("Date", "Sat, 01 Mar 2025 12:00:00 GMT")
	h.Set("Server", "nginx")
	h.Set("Cache-Control", "private, max-age=0")
	h.Set("Vary", "Accept-Encoding")
	h.Set("X-Request-Id", "f4c1a2b3")
	h.Set("Strict-Transport-Security", "max-age=63072000")
	return h
}

func TestFamily(t *testing.T) {
	// family relies on the order of the slot groups; check a slot of each.
	tests := []struct {
		s    slot
		want uint32
	}{
		{sDate, 0},
		{sRateLimitPolicy, fIETF},
		{sBetaRateLimitPolicy, fBeta},
		{sObserved, fDraft06},
		{sXBucket, fX},
		{sDashReset, fDash},
		{sAzureResetTokens, fOpenAI},
		{sUnitFirst + 8, fUnitFirst},
		{sAnthropic + 11, fAnthropic},
		{sTwitter + 5, fTwitter},
		{sKong + 11, fKong},
		{sHubSpotSecondlyRemaining, fHubSpot},
		{sShopify, fShopify},
		{sZendeskTickets, fZendesk},
	}
	for _, tt := range tests {
		if got := family(tt.s); got != tt.want {
			t.Errorf("family(%d) = %b, want %b", tt.s, got, tt.want)
		}
	}
	for s := sDate + 1; s < numSlots; s++ {
		if f := family(s); f == 0 || f&(f-1) != 0 {
			t.Errorf("family(%d) = %b, want one family", s, f)
		}
	}
}

func TestSlotNames(t *testing.T) {
	// Every slot has a canonical name that maps back to it, in any case.
	for s := sDate; s < numSlots; s++ {
		k := slotNames[s]
		if k == "" || textproto.CanonicalMIMEHeaderKey(k) != k {
			t.Fatalf("slot %d: name %q is not canonical", s, k)
		}
		for _, name := range []string{k, strings.ToLower(k), strings.ToUpper(k)} {
			if got := slotOf(name); got != s {
				t.Errorf("slotOf(%q) = %d, want %d", name, got, s)
			}
		}
		// The names of the common prefixes are found by their rest.
		if rest, ok := strings.CutPrefix(k, "X-Ratelimit-"); ok && xRatelimitSlot(rest) != s {
			t.Errorf("xRatelimitSlot(%q) = %d, want %d", rest, xRatelimitSlot(rest), s)
		}
		if rest, ok := strings.CutPrefix(k, "X-Rate-Limit"); ok && xRateLimitSlot(rest) != s {
			t.Errorf("xRateLimitSlot(%q) = %d, want %d", rest, xRateLimitSlot(rest), s)
		}
		if rest, ok := strings.CutPrefix(k, "Ratelimit"); ok && ratelimitSlot(rest) != s {
			t.Errorf("ratelimitSlot(%q) = %d, want %d", rest, ratelimitSlot(rest), s)
		}
	}
	for _, k := range []string{"", "D", "Dat", "Content-Type", "X-Request-Id", "Ratelimit-Polic", "Ratelimit-Policyy", "X-Ratelimit-Reset-Requestss",
		"X-Ratelimit-", "X-Ratelimit-Limits", "X-Ratelimit-Reset-Afte", "Ratelimitt", "Ratelimit-",
		"X-Rate-Limit-", "X-Rate-Limits", "X-Rate-Limit-Reset-Token",
		"X-Ratelimit-Remaining-Requesta", "X-Ratelimit-Remaining-Reques", "X-Ratelimit-Remaining-Requestss",
		"X-Ratelimit-Requests-Remaininx", "X-Ratelimit-Complexity-Remaining-", "X-Ratelimit-Api-Units-Remainin"} {
		if got := slotOf(k); got != sNone {
			t.Errorf("slotOf(%q) = %d, want none", k, got)
		}
	}
}

func TestHeaderDialectAllocs(t *testing.T) {
	// The typical response of each family allocates its result and what
	// its readers must keep: the partition keys of ietf-two-pk, the legacy
	// policies of drafts 06 and 07, the names Hugging Face's quirk reads.
	want := map[string]float64{"ietf-two-pk": 3, "huggingface": 5, "draft-06": 2, "draft-07": 2}
	now := time.Date(2025, 3, 1, 12, 0, 7, 0, time.UTC)
	for _, d := range dialectBenchmarks {
		h := plainHeader()
		for _, f := range d.fields {
			h.Add(f[0], f[1])
		}
		w, ok := want[d.name]
		if !ok {
			w = 1
		}
		if n := testing.AllocsPerRun(20, func() { Header(h, now) }); n != w {
			t.Errorf("%s: Header allocates %v times, want %v", d.name, n, w)
		}
	}
}

// The package documentation: "Quota.Policy holds the IETF identifier, or
// the name a dialect gives: Envoy's name parameter". A quoted name in a
// legacy limit list reads as the same item in an unnamed RateLimit-Policy
// does (the RFC 9651 scanner): a ";" inside the quotes is part of it, and
// its escapes are resolved. It was cut at the ";", and kept its escapes.
func TestEnvoyQuotedName(t *testing.T) {
	now := time.Unix(1740830400, 0)
	for _, tt := range []struct{ list, want string }{
		{`10, 10;w=60;name="a;b"`, "a;b"},
		{`10, 10;w=60;name="a\"b"`, `a"b`},
	} {
		h := http.Header{"X-Ratelimit-Limit": {tt.list}, "X-Ratelimit-Remaining": {"5"}}
		qs := Header(h, now)
		if len(qs) != 1 || qs[0].Policy != tt.want {
			t.Errorf("Header(%v) = %s; want policy %q", h, formatQuotas(qs), tt.want)
		}
		// The reference reading of the same item, as an unnamed
		// RateLimit-Policy (rlfields.go unnamedPolicies).
		h = http.Header{"Ratelimit-Policy": {tt.list[len("10, "):]}, "Ratelimit-Limit": {"10"}, "Ratelimit-Remaining": {"5"}}
		if qs := Header(h, now); len(qs) != 1 || qs[0].Policy != tt.want {
			t.Errorf("Header(%v) = %s; want policy %q", h, formatQuotas(qs), tt.want)
		}
	}
}

// A name a quota is known by (GitHub's X-RateLimit-Resource, Discord's
// X-RateLimit-Bucket, GitLab's RateLimit-Name) repeated on one line joined
// by a comma is unknown, as on two lines (see the package doc). The joined
// line was taken whole as the policy's name, "core, search", on the fast
// path and the general one alike.
func TestNameCommaJoinedIsUnknown(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, field string
		base        http.Header
	}{
		{"github", "X-Ratelimit-Resource", http.Header{"X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Remaining": {"4999"}}},
		{"discord", "X-Ratelimit-Bucket", http.Header{"X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Remaining": {"5"}}},
		{"gitlab", "Ratelimit-Name", http.Header{"Ratelimit-Limit": {"10"}, "Ratelimit-Remaining": {"5"}}},
	} {
		twoLines := tc.base.Clone()
		twoLines[tc.field] = []string{"core", "search"}
		joined := tc.base.Clone()
		joined[tc.field] = []string{"core, search"}
		if got, want := formatQuotas(Header(joined, now)), formatQuotas(Header(twoLines, now)); got != want {
			t.Errorf("%s: %s %q on one line reads as %s, on two lines as %s", tc.name, tc.field, "core, search", got, want)
		}
	}
}

// Header's result has no room to spare, whatever its length: two callers
// appending to one result get arrays of their own. For a while the result
// was grown with slices.Grow, which rounds up to the allocator's size
// class: 10 quotas came with room for 11.
func TestHeaderResultHasNoSpareCapacity(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for n := 1; n <= 16; n++ {
		var pol, lim []string
		for i := range n {
			pol = append(pol, fmt.Sprintf(`"p%d";q=10;w=1`, i))
			lim = append(lim, fmt.Sprintf(`"p%d";r=1;t=1`, i))
		}
		h := http.Header{}
		h.Set("RateLimit-Policy", strings.Join(pol, ", "))
		h.Set("RateLimit", strings.Join(lim, ", "))
		q := Header(h, now)
		if len(q) != n || cap(q) != n {
			t.Errorf("Header of %d policies: len %d, cap %d; want both %d", n, len(q), cap(q), n)
		}
	}
}
