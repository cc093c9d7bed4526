package parse_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A Date whose value the Reader first read 2 s or more before is no clock:
// given an estimate, Read returns no Date for it and measures resets from
// the estimate, as for an answer with no Date; Date judges it so too.
// Another value is read afresh. With no estimate, the Date is all there is
// to measure from, and it is kept.
func TestReaderFrozenDate(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	h := func(date time.Time, reset time.Time) http.Header {
		return http.Header{
			"Date":                  {date.Format(http.TimeFormat)},
			"X-Ratelimit-Limit":     {"10"},
			"X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Reset":     {reset.Format(http.TimeFormat)},
		}
	}
	reset := t0.Add(30 * time.Second)
	var r parse.Reader
	tests := []struct {
		now      time.Duration // after t0: the answer's arrival, and the estimate
		date     time.Time
		wantDate bool
		want     time.Duration // the reset read
	}{
		{0, t0, true, 30 * time.Second},
		{1900 * time.Millisecond, t0, true, 30 * time.Second},
		{2 * time.Second, t0, false, 28 * time.Second},
		{20 * time.Second, t0, false, 10 * time.Second},
		{21 * time.Second, t0.Add(21 * time.Second), true, 9 * time.Second},
		{22 * time.Second, t0.Add(21 * time.Second), true, 9 * time.Second},
	}
	for _, tt := range tests {
		now := t0.Add(tt.now)
		hdr := h(tt.date, reset)
		qs, date := r.Read(hdr, now, now)
		if !date.IsZero() != tt.wantDate || len(qs) != 1 || qs[0].Reset != tt.want {
			t.Errorf("at %v, Date %v: Read = %v, Date %v; want a Date %v, reset %v", tt.now, tt.date.Sub(t0), qs, date, tt.wantDate, tt.want)
		}
		if d := r.Date(hdr["Date"], now, now); !d.IsZero() != tt.wantDate {
			t.Errorf("at %v, Date %v: Reader.Date = %v, want a Date %v", tt.now, tt.date.Sub(t0), d, tt.wantDate)
		}
	}

	var fresh parse.Reader
	for _, after := range []time.Duration{0, 5 * time.Second, time.Minute} {
		now := t0.Add(after)
		hdr := h(t0, reset)
		if qs, date := fresh.Read(hdr, now, time.Time{}); !date.Equal(t0) || len(qs) != 1 || qs[0].Reset != 30*time.Second {
			t.Errorf("with no estimate, at %v: Read = %v, Date %v; want the Date kept, reset 30s", after, qs, date)
		}
		if d := fresh.Date(hdr["Date"], now, time.Time{}); !d.Equal(t0) {
			t.Errorf("with no estimate, at %v: Reader.Date = %v, want the Date kept", after, d)
		}
	}
}
