package parse

import (
	"net/http"
	"testing"
	"time"
)

// A response's Date repeated over two field lines counts by its first
// (parser.origin, Reader.date), so absolute resets are still measured from
// the server's clock. The same repetition on one line, as an intermediary
// that joins duplicate fields sends it (Node's http module joins every
// duplicate field but a few, Date among those joined, with ", "; two lines
// and one comma-joined line are the same field, RFC 9110 §5.3), made the
// Date invalid: resets were then measured from the caller's clock, and a
// reset one minute away on a client seven minutes fast read as due now.
func TestDateCommaJoined(t *testing.T) {
	const date = "Sat, 01 Mar 2025 12:00:00 GMT"
	served := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	now := served.Add(7 * time.Minute) // the client's clock runs ahead
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
				"X-Ratelimit-Limit":     {"60"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {"1740830460"}, // 12:01:00, a minute after Date
			}
			const want = time.Minute
			quick, general := readBothPaths(h, now)
			var r Reader
			read, readDate := r.Read(h, now, time.Time{})
			for i, got := range [][]Quota{Header(h, now), quick, general, read} {
				if len(got) != 1 || got[0].Reset != want {
					t.Errorf("Date %q, by %s: %v, want one quota resetting in %v (measured from Date, as for one line)",
						tt.dates, [...]string{"Header", "the fast path", "the general path", "a Reader"}[i], got, want)
				}
			}
			if !readDate.Equal(served) {
				t.Errorf("Date %q: Reader.Read returned Date %v, want %v", tt.dates, readDate, served)
			}
		})
	}
}
