package parse

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// httpDateTest is a case of TestHTTPDate, also a seed of FuzzHTTPDate.
type httpDateTest struct {
	name string
	in   string
	now  time.Time
	want time.Time // zero: invalid
}

func httpDateTests() []httpDateTest {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	rfc := time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC)
	return []httpDateTest{
		{"IMF-fixdate", "Sun, 06 Nov 1994 08:49:37 GMT", now, rfc},
		{"RFC 850", "Sunday, 06-Nov-94 08:49:37 GMT", now, rfc},
		{"asctime", "Sun Nov  6 08:49:37 1994", now, rfc},
		{"asctime two-digit day", "Sun Nov 06 08:49:37 1994", now, rfc},
		{"asctime day 16", "Wed Nov 16 08:49:37 1994", now, time.Date(1994, 11, 16, 8, 49, 37, 0, time.UTC)},
		{"RFC 9110 example", "Fri, 31 Dec 1999 23:59:59 GMT", now, time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC)},
		{"leap second rolls over", "Wed, 31 Dec 2008 23:59:60 GMT", now, time.Date(2009, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"weekday not checked", "Mon, 06 Nov 1994 08:49:37 GMT", now, rfc},
		{"29 February in a leap year", "Thu, 29 Feb 2024 00:00:00 GMT", now, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},

		// RFC 9110 §5.6.7: more than 50 years ahead means the past century.
		{"two-digit year this century", "Wednesday, 01-Jan-30 00:00:00 GMT", now, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"two-digit year 50 years ahead", "Saturday, 01-Jun-76 12:00:00 GMT", now, time.Date(2076, 6, 1, 12, 0, 0, 0, time.UTC)},
		{"two-digit year just past 50 years", "Monday, 01-Jun-76 12:00:01 GMT", now, time.Date(1976, 6, 1, 12, 0, 1, 0, time.UTC)},
		{"two-digit year 77", "Monday, 01-Jan-77 00:00:00 GMT", now, time.Date(1977, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"two-digit year 99", "Friday, 31-Dec-99 23:59:59 GMT", now, time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC)},
		{"two-digit year 00", "Saturday, 01-Jan-00 00:00:00 GMT", now, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"two-digit year near a century end", "Monday, 01-Jan-10 00:00:00 GMT", time.Date(2090, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2110, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"two-digit year past at a century end", "Monday, 01-Jan-50 00:00:00 GMT", time.Date(2090, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2050, 1, 1, 0, 0, 0, 0, time.UTC)},

		// Case-sensitive (RFC 9110 §5.6.7), exact grammar.
		{"lower-case day", "sun, 06 Nov 1994 08:49:37 GMT", now, time.Time{}},
		{"lower-case month", "Sun, 06 nov 1994 08:49:37 GMT", now, time.Time{}},
		{"lower-case GMT", "Sun, 06 Nov 1994 08:49:37 gmt", now, time.Time{}},
		{"UTC zone", "Sun, 06 Nov 1994 08:49:37 UTC", now, time.Time{}},
		{"RFC 850 with PST", "Sunday, 06-Nov-94 08:49:37 PST", now, time.Time{}},
		{"RFC 850 short day name", "Sun, 06-Nov-94 08:49:37 GMT", now, time.Time{}},
		{"IMF long day name", "Sunday, 06 Nov 1994 08:49:37 GMT", now, time.Time{}},
		{"asctime single space", "Sun Nov 6 08:49:37 1994", now, time.Time{}},
		{"one-digit day", "Sun, 6 Nov 1994 08:49:37 GMT", now, time.Time{}},
		{"surrounding space", " Sun, 06 Nov 1994 08:49:37 GMT", now, time.Time{}},
		{"hour 24", "Sun, 06 Nov 1994 24:00:00 GMT", now, time.Time{}},
		{"minute 60", "Sun, 06 Nov 1994 08:60:00 GMT", now, time.Time{}},
		{"second 61", "Sun, 06 Nov 1994 08:49:61 GMT", now, time.Time{}},
		{"day 0", "Sun, 00 Nov 1994 08:49:37 GMT", now, time.Time{}},
		{"31 November", "Sun, 31 Nov 1994 08:49:37 GMT", now, time.Time{}},
		{"29 February in a common year", "Sun, 29 Feb 2023 08:49:37 GMT", now, time.Time{}},
		{"signed field", "Sun, +6 Nov 1994 08:49:37 GMT", now, time.Time{}},
		{"RFC 3339", "1994-11-06T08:49:37Z", now, time.Time{}},
		{"epoch", "784111777", now, time.Time{}},
		{"empty", "", now, time.Time{}},
		{"JavaScript Date.toString", "Tue Feb 16 2021 09:02:42 GMT+0100 (Central European Standard Time)", now, time.Time{}},
	}
}

func TestHTTPDate(t *testing.T) {
	tests := httpDateTests()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := HTTPDate(tt.in, tt.now)
			if ok != !tt.want.IsZero() || !got.Equal(tt.want) {
				t.Errorf("HTTPDate(%q, %v) = %v, %v, want %v, %v", tt.in, tt.now.Format(time.RFC3339), got, ok, tt.want, !tt.want.IsZero())
			}
			if ok && got.Location() != time.UTC {
				t.Errorf("HTTPDate(%q) location = %v, want UTC", tt.in, got.Location())
			}
		})
	}
}

func FuzzHTTPDate(f *testing.F) {
	for _, tt := range httpDateTests() {
		f.Add(tt.in, tt.now.Unix())
	}
	f.Fuzz(func(t *testing.T, s string, unix int64) {
		now := time.Unix(unix, 0)
		got, ok := HTTPDate(s, now)
		if got2, ok2 := HTTPDate(s, now); !got2.Equal(got) || ok2 != ok {
			t.Fatalf("HTTPDate(%q) = %v, %v, then %v, %v", s, got, ok, got2, ok2)
		}
		if !ok {
			if !got.IsZero() {
				t.Fatalf("HTTPDate(%q) = %v, false", s, got)
			}
			return
		}
		// An accepted date formats back to itself, except for leap seconds
		// and the alternative forms.
		if len(s) == len(http.TimeFormat) && s[3] == ',' && s[len(s)-6:len(s)-4] != "60" {
			if back := got.Format(http.TimeFormat); back[5:] != s[5:] {
				t.Fatalf("HTTPDate(%q) = %v, which formats as %q", s, got, back)
			}
		}
		if len(s) > len(http.TimeFormat) && strings.Contains(s, "-") {
			if got.After(now.AddDate(50, 0, 0)) || !got.After(now.AddDate(-50, 0, 0).Add(-24*time.Hour)) {
				t.Fatalf("HTTPDate(%q, %v) = %v: RFC 850 year outside the 100-year window", s, now, got)
			}
		}
	})
}
