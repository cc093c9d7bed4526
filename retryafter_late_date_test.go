package polite_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// A refusal whose Date is five hours behind the caller's clock, as a
// server writing its local time under "GMT" sends it, asking to retry at
// an HTTP-date a minute away by the caller's clock: measured from the
// Date, the wait was five hours and a minute. A Date more than 10 minutes
// behind is taken for one that lies, and the date, still ahead by now, is
// waited for by now. Within 10 minutes, or for a date already past by
// now (a server whose clock is that late), the Date rules.
func TestRetryAfterDateFarBehind(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name        string
		date, retry time.Time
		want        time.Duration
	}{
		{"five hours behind", now.Add(-5 * time.Hour), now.Add(time.Minute), time.Minute},
		{"eleven minutes behind", now.Add(-11 * time.Minute), now.Add(time.Minute), time.Minute},
		{"nine minutes behind", now.Add(-9 * time.Minute), now.Add(time.Minute), 10 * time.Minute},
		{"a late clock's date", now.Add(-5 * time.Hour), now.Add(-5*time.Hour + time.Minute), time.Minute},
		{"five hours ahead", now.Add(5 * time.Hour), now.Add(5*time.Hour + time.Minute), time.Minute},
	} {
		h := http.Header{
			"Date":        {tt.date.Format(http.TimeFormat)},
			"Retry-After": {tt.retry.Format(http.TimeFormat)},
		}
		if d, ok := polite.RetryAfter(h, now); !ok || d != tt.want {
			t.Errorf("%s: RetryAfter = %v, %v; want %v, true", tt.name, d, ok, tt.want)
		}
	}
}
