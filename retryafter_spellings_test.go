package polite_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// A hand-built header holding Retry-After under two spellings, neither
// canonical, was read by whichever the map's iteration met first: 1 s on
// one call, 100 s on the next. Their lines are joined in name order, as
// package parse joins every field's: two lines of a singleton field, no
// hint, on every call.
func TestRetryAfterSpellingsJoinedInNameOrder(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{"retry-after": {"1"}, "RETRY-AFTER": {"100"}}
	type answer struct {
		d  time.Duration
		ok bool
	}
	seen := map[answer]bool{}
	for range 200 {
		d, ok := polite.RetryAfter(h, now)
		seen[answer{d, ok}] = true
	}
	if len(seen) != 1 || !seen[answer{0, false}] {
		t.Errorf("RetryAfter(%v) gave %v over 200 calls; want no hint, every time", h, seen)
	}
}

// So was Date, from which an HTTP-date Retry-After is measured: 5 or
// 10 minutes by the call.
func TestRetryAfterDateSpellingsJoinedInNameOrder(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{
		"Retry-After": {"Sat, 01 Mar 2025 12:10:00 GMT"},
		"date":        {"Sat, 01 Mar 2025 12:00:00 GMT"},
		"DATE":        {"Sat, 01 Mar 2025 12:05:00 GMT"},
	}
	seen := map[time.Duration]bool{}
	for range 200 {
		d, _ := polite.RetryAfter(h, now)
		seen[d] = true
	}
	if len(seen) != 1 {
		t.Errorf("RetryAfter(%v) gave %d different waits over 200 calls: %v; want one", h, len(seen), seen)
	}
}

// With the canonical Retry-After present, another spelling's line was
// dropped and the canonical read alone: the same two lines gave no hint
// when neither was canonical, and 1 s when one was. They are joined in
// name order either way.
func TestRetryAfterCanonicalJoinedWithOtherSpelling(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	mixed := http.Header{"Retry-After": {"1"}, "retry-after": {"100"}}
	other := http.Header{"RETRY-AFTER": {"1"}, "retry-after": {"100"}}
	dm, okm := polite.RetryAfter(mixed, now)
	do, oko := polite.RetryAfter(other, now)
	if dm != do || okm != oko {
		t.Errorf("RetryAfter(%v) = %v, %v but RetryAfter(%v) = %v, %v: two lines of a singleton field under two spellings read differently by whether one is canonical", mixed, dm, okm, other, do, oko)
	}
}
