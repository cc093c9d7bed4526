package polite

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/politehttp/polite/internal/serverclock"
	"github.com/politehttp/polite/parse"
)

// Under a Date more than 10 minutes behind, a reset or a Retry-After date
// is due from the caller's clock while it is no more than 2 s before the
// request was sent, and read from the Date when earlier: a right clock
// states neither before it answered. Before, the line was a minute
// before the answer came, whatever the request's latency: a server truly
// 15 minutes late was refused seven times a window, and a Retry-After
// date on an answer of more than a minute under a Date that lies was
// read as hours.
func TestSentBehind(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		off     time.Duration // Date less the caller's clock
		took    time.Duration // from sending to the answer
		at      time.Duration // the instant stated, less now, by the caller's clock
		want    time.Duration // the reset
		wantRA  time.Duration // the wait for a Retry-After date
		wantRaw time.Duration // what parse alone reads (a minute's line)
	}{
		{"clock 15m late, reset 3s past, quick answer", -15 * time.Minute, 50 * time.Millisecond, -3 * time.Second, 15*time.Minute - 3*time.Second, 15*time.Minute - 3*time.Second, 0},
		{"clock 15m late, reset 30s past", -15 * time.Minute, 50 * time.Millisecond, -30 * time.Second, 15*time.Minute - 30*time.Second, 15*time.Minute - 30*time.Second, 0},
		{"Date lies, reset rounded down, 1s past", -5 * time.Hour, 50 * time.Millisecond, -time.Second, 0, 0, 0},
		{"Date lies, reset ahead", -5 * time.Hour, 50 * time.Millisecond, 4 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second},
		{"Date lies, answer of 30s", -5 * time.Hour, 30 * time.Second, -28 * time.Second, 0, 0, 0},
		// A reset parse read from the Date stays (see sentBehind).
		{"Date lies, answer of 90s", -5 * time.Hour, 90 * time.Second, -88 * time.Second, 5*time.Hour - 88*time.Second, 0, 5*time.Hour - 88*time.Second},
		{"Date lies, reset past before the request went", -5 * time.Hour, 90 * time.Second, -95 * time.Second, 5*time.Hour - 95*time.Second, 5*time.Hour - 95*time.Second, 5*time.Hour - 95*time.Second},
		{"Date near, reset past", -time.Minute, 50 * time.Millisecond, -3 * time.Second, 57 * time.Second, 57 * time.Second, 57 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			date := now.Add(tt.off)
			at := now.Add(tt.at)
			h := http.Header{
				"Date":                  {date.Format(http.TimeFormat)},
				"X-Ratelimit-Limit":     {"20"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {strconv.FormatInt(at.Unix(), 10)},
			}
			var rd parse.Reader
			qs, d := rd.ReadFresh(h, now, time.Time{})
			if len(qs) != 1 {
				t.Fatalf("quotas %v", qs)
			}
			if qs[0].Reset != tt.wantRaw {
				t.Errorf("parse read %v, want %v", qs[0].Reset, tt.wantRaw)
			}
			if serverclock.Behind(d, now) {
				sentBehind(qs, h, &rd, d, now, &lease{at: now.Add(-tt.took)})
			}
			if qs[0].Reset != tt.want {
				t.Errorf("reset %v, want %v", qs[0].Reset, tt.want)
			}
			// A Retry-After date is read alike.
			h = http.Header{
				"Date":        {date.Format(http.TimeFormat)},
				"Retry-After": {at.Format(http.TimeFormat)},
			}
			if w, _, _ := serverWait(h, nil, now, time.Time{}, now.Add(-tt.took), nil); w != tt.wantRA {
				t.Errorf("Retry-After wait %v, want %v", w, tt.wantRA)
			}
		})
	}
}

// A delay reads alike from the Date and from now: left as it is.
func TestSentBehindDelay(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	h := http.Header{
		"Date":                  {now.Add(-time.Hour).Format(http.TimeFormat)},
		"X-Ratelimit-Limit":     {"20"},
		"X-Ratelimit-Remaining": {"0"},
		"X-Ratelimit-Reset":     {"30"},
	}
	var rd parse.Reader
	qs, d := rd.ReadFresh(h, now, time.Time{})
	sentBehind(qs, h, &rd, d, now, &lease{at: now.Add(-time.Minute)})
	if len(qs) != 1 || qs[0].Reset != 30*time.Second {
		t.Errorf("quotas %v, want one with a reset of 30s", qs)
	}
}
