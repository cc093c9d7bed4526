package parse

import (
	"net/http"
	"testing"
	"time"
)

// An HTTP-date reset in a numeric zone, as RFC 5322 writes dates (Go's
// time.RFC1123Z, PHP's date('r'), Python's email.utils.formatdate), was
// unknown: only "GMT", and "UTC" for Go's time.RFC1123, were read. The
// offset is applied, "03:00:00 +0100" being 02:00 GMT. A day of one digit
// is read too.
func TestResetDateNumericZone(t *testing.T) {
	now := time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		reset string
		want  time.Duration
	}{
		{"Fri, 04 Dec 2026 02:00:00 GMT", time.Hour},
		{"Fri, 04 Dec 2026 02:00:00 +0000", time.Hour},
		{"Fri, 04 Dec 2026 02:00:00 -0000", time.Hour},
		{"Fri, 04 Dec 2026 03:00:00 +0100", time.Hour},
		{"Thu, 03 Dec 2026 22:30:00 -0330", time.Hour},
		{"Fri, 04 Dec 2026 01:30:00 +0100", 0}, // 00:30 GMT, past
		{"Fri, 04 Dec 2026 02:00:00 +2400", -1},
		{"Fri, 04 Dec 2026 02:00:00 +0060", -1},
		{"Fri, 04 Dec 2026 02:00:00 0000", -1},
		{"Fri, 04 Dec 2026 02:00:00 +000", -1},
		{"Fri, 04 Dec 2026 02:00:00 +00000", -1},
		{"Fri, 04 Dec 2026 02:00:00 +00:00", -1},
		{"Fri, 04 Dec 2026 02:00:00 GMT+0100", -1},
		{"Friday, 04-Dec-26 02:00:00 +0000", -1},
		// The day unpadded, as RFC 1123 and RFC 5322 allow and Java's
		// DateTimeFormatter.RFC_1123_DATE_TIME writes: it was unknown.
		{"Fri, 4 Dec 2026 02:00:00 +0000", time.Hour},
		{"Fri, 4 Dec 2026 02:00:00 GMT", time.Hour},
		{"Fri, 4 Dec 2026 02:00:00 UTC", time.Hour},
		{"Fri, 4 Dec 2026 03:00:00 +0100", time.Hour},
		{"Fri,  4 Dec 2026 02:00:00 GMT", -1},
		{"Fri, 4 Dec 26 02:00:00 GMT", -1},
	} {
		h := http.Header{
			"Date":                  {"Fri, 04 Dec 2026 01:00:00 GMT"},
			"X-Ratelimit-Limit":     {"100"},
			"X-Ratelimit-Remaining": {"5"},
			"X-Ratelimit-Reset":     {tt.reset},
		}
		quick, general := readBothPaths(h, now)
		var r Reader
		read, _ := r.Read(h, now, time.Time{})
		for i, got := range [][]Quota{Header(h, now), read, quick, general} {
			if len(got) != 1 || got[0].Reset != tt.want {
				t.Errorf("X-RateLimit-Reset %q, by %s: %v, want one quota resetting in %v",
					tt.reset, [...]string{"Header", "a Reader", "the fast path", "the general path"}[i], got, tt.want)
				break
			}
		}
	}
}
