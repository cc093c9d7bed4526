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
// behind is taken for one that lies, and the date is waited for by now (a
// date just past by now, rounded down, asks for no wait). Within 10
// minutes, or for a date more than 10 minutes past by now (a server whose
// clock is that late), the Date rules. Five hours ahead, a date a minute
// away by now read as past: a date more than 10 minutes past by the Date,
// and at most 10 minutes ahead by now, is waited for by now.
func TestRetryAfterDateFarOff(t *testing.T) {
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
		{"five hours behind, a date just past", now.Add(-5 * time.Hour), now.Add(-400 * time.Millisecond), 0},
		{"five hours ahead", now.Add(5 * time.Hour), now.Add(5*time.Hour + time.Minute), time.Minute},
		{"five hours ahead, a right clock's date", now.Add(5 * time.Hour), now.Add(time.Minute), time.Minute},
		{"five hours ahead, a date 11 minutes ahead by now", now.Add(5 * time.Hour), now.Add(11 * time.Minute), 0},
		{"nine minutes ahead, a right clock's date", now.Add(9 * time.Minute), now.Add(2 * time.Minute), 0},
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
