package parse

import (
	"net/http"
	"testing"
	"time"
)

// An Age whose first line, or first member, was empty was read as not
// from a cache, where a recipient skips empty list members (RFC 9110
// §5.6.1): the lines "" and "5" say 5.
func TestFromCacheSkipsEmptyMembers(t *testing.T) {
	for _, tc := range []struct {
		h    http.Header
		want bool
	}{
		{http.Header{"Age": {"", "5"}}, true},
		{http.Header{"Age": {", 5"}}, true},
		{http.Header{"Age": {" , ,\t7"}}, true},
		{http.Header{"Age": {"", "0"}}, false},
		{http.Header{"Age": {",", ""}}, false},
		{http.Header{"Age": {"", "x, 5"}}, false},
		{http.Header{"AGE": {""}, "Age": {"5"}}, true},
		{http.Header{"AGE": {" , "}, "age": {"3"}}, true},
		{http.Header{"AGE": {"0"}, "age": {"3"}}, false},
	} {
		if got := FromCache(tc.h); got != tc.want {
			t.Errorf("FromCache(%q) = %v, want %v", tc.h, got, tc.want)
		}
		h := tc.h.Clone()
		h.Set("RateLimit-Policy", `"a";q=10;w=1`)
		var r Reader
		now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
		q, _ := r.ReadFresh(h, now, time.Time{})
		if got := len(q) == 0; got != tc.want {
			t.Errorf("ReadFresh with Age %q: %d quotas, from a cache %v", tc.h, len(q), tc.want)
		}
	}
}
