package parse

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// A Date five hours behind the caller's clock, as a server writing its
// local time under "GMT" sends it, had every absolute reset measured from
// it: a reset a minute away read as five hours and a minute, which held a
// client for the cap of a pause. A Date more than 10 minutes behind is
// taken for one that lies: an instant is measured from the caller's
// clock, a reset just past by it (rounded down) being due. Within 10
// minutes, and for an instant more than a minute past by the caller's
// clock (a server whose clock is that late), the Date still rules. Five hours ahead, a reset a minute
// away read as past, the quota whole again: an instant more than 10
// minutes past by the Date, which no server states as its next reset,
// and at most 10 minutes ahead by the caller's clock, is measured from
// that clock.
func TestResetDateFarOff(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	epoch := func(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
	for _, tt := range []struct {
		name  string
		date  time.Time // the response's Date
		reset time.Time // the instant of the reset
		want  time.Duration
		// fromNow: the reset is measured from the caller's clock, so an
		// estimate of the server's clock half a second past the Date
		// takes nothing off it.
		fromNow bool
	}{
		{"five hours behind", now.Add(-5 * time.Hour), now.Add(time.Minute), time.Minute, true},
		{"a year behind", now.AddDate(-1, 0, 0), now.Add(time.Minute), time.Minute, true},
		{"eleven minutes behind", now.Add(-11 * time.Minute), now.Add(time.Minute), time.Minute, true},
		{"nine minutes behind", now.Add(-9 * time.Minute), now.Add(time.Minute), 10 * time.Minute, false},
		{"behind, a late clock's reset", now.Add(-5 * time.Hour), now.Add(-5*time.Hour + time.Minute), time.Minute, false},
		// A right reset rounded down to its second, or stated before
		// the response came, is past by now by a little: due, not five
		// hours away.
		{"five hours behind, a reset just past", now.Add(-5 * time.Hour), now.Add(-400 * time.Millisecond), 0, true},
		{"five hours behind, a reset 59 seconds past", now.Add(-5 * time.Hour), now.Add(-59 * time.Second), 0, true},
		// Past by more, a clock truly that late reckoned it.
		{"five hours behind, a reset 61 seconds past", now.Add(-5 * time.Hour), now.Add(-61 * time.Second), 5*time.Hour - 61*time.Second, false},
		{"five hours ahead", now.Add(5 * time.Hour), now.Add(5*time.Hour + time.Minute), time.Minute, false},
		{"five hours ahead, a right clock's reset", now.Add(5 * time.Hour), now.Add(time.Minute), time.Minute, true},
		{"five hours ahead, a reset 11 minutes ahead by now", now.Add(5 * time.Hour), now.Add(11 * time.Minute), 0, true},
		{"fifteen minutes ahead, a right clock's reset", now.Add(15 * time.Minute), now.Add(2 * time.Minute), 2 * time.Minute, true},
		{"eleven minutes ahead, a reset 9 minutes past by Date", now.Add(11 * time.Minute), now.Add(2 * time.Minute), 0, true},
		{"nine minutes ahead, a right clock's reset", now.Add(9 * time.Minute), now.Add(2 * time.Minute), 0, true},
		{"in step", now, now.Add(time.Minute), time.Minute, false},
	} {
		for _, form := range []struct {
			name   string
			fields http.Header
		}{
			{"epoch seconds", http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {epoch(tt.reset)}}},
			{"epoch milliseconds", http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(tt.reset.UnixMilli(), 10)}}},
			{"HTTP-date", http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {tt.reset.Format(http.TimeFormat)}}},
			{"RFC 3339", http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {tt.reset.Format(time.RFC3339)}}},
			{"OpenAI epoch", http.Header{"X-Ratelimit-Limit-Requests": {"60"}, "X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Requests": {epoch(tt.reset)}}},
		} {
			h := form.fields.Clone()
			h.Set("Date", tt.date.Format(http.TimeFormat))
			quick, general := readBothPaths(h, now)
			var r Reader
			read, _ := r.Read(h, now, time.Time{})
			estimated, _ := new(Reader).Read(h, now, tt.date.Add(time.Second/2))
			for i, got := range [][]Quota{Header(h, now), read, estimated, quick, general} {
				want := tt.want
				if i == 2 && !tt.fromNow {
					want -= time.Second / 2
				}
				if len(got) != 1 || got[0].Reset != want {
					t.Errorf("%s, %s, by %s: %v, want one quota resetting in %v", tt.name, form.name,
						[...]string{"Header", "a Reader", "a Reader with an estimate", "the fast path", "the general path"}[i], got, want)
				}
			}
		}
	}
}
