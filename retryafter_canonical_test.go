package polite_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

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
