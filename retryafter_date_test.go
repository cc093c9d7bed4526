package polite_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/parse"
)

// RetryAfter measures an HTTP-date from the response's Date "when that is
// valid (which cancels clock skew between client and server)". A Date
// repeated over two lines counts by its first for parse.Header (and its
// resets stay measured from the server's clock), but RetryAfter then
// measured from the caller's clock, as it did for the same Date joined on
// one line: a refusal asking for ten minutes, read by a client seven
// minutes fast, was waited for three. The two readers of one response
// disagreed on which clock it carries.
func TestRetryAfterRepeatedDate(t *testing.T) {
	const date = "Sat, 01 Mar 2025 12:00:00 GMT"
	now := time.Date(2025, 3, 1, 12, 7, 0, 0, time.UTC) // seven minutes ahead
	for _, tt := range []struct {
		name  string
		dates []string
	}{
		{"one line", []string{date}},
		{"two lines", []string{date, date}},
		{"comma-joined", []string{date + ", " + date}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{
				"Date":                  tt.dates,
				"Retry-After":           {"Sat, 01 Mar 2025 12:10:00 GMT"},
				"X-Ratelimit-Limit":     {"60"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {"1740830460"}, // 12:01:00
			}
			if d, ok := polite.RetryAfter(h, now); !ok || d != 10*time.Minute {
				t.Errorf("Date %q: RetryAfter = %v, %v; want 10m0s, true (measured from Date)", tt.dates, d, ok)
			}
			if len(tt.dates) == 2 {
				// parse reads the same response from the Date's first line.
				if qs := parse.Header(h, now); len(qs) != 1 || qs[0].Reset != time.Minute {
					t.Fatalf("parse.Header: %v", qs)
				}
			}
		})
	}
}
