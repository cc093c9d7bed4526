package polite

import (
	"math"
	"net/http"
	"testing"
	"time"
)

// retryAfterTest is a case of TestRetryAfter, also a seed of FuzzRetryAfter.
type retryAfterTest struct {
	name   string
	header http.Header
	now    time.Time
	want   time.Duration
	ok     bool
}

func retryAfterTests() []retryAfterTest {
	// The client clock runs minutes off the server's Date: HTTP-dates must
	// be measured from Date.
	date := "Mon, 05 Aug 2019 09:27:00 GMT"
	server := time.Date(2019, 8, 5, 9, 27, 0, 0, time.UTC)
	now := server.Add(6*time.Minute + 17*time.Second)
	return []retryAfterTest{
		{"absent", http.Header{}, now, 0, false},
		{"RFC 9110 delay-seconds", http.Header{"Retry-After": {"120"}}, now, 2 * time.Minute, true},
		{"zero", http.Header{"Retry-After": {"0"}}, now, 0, true},
		{"Shopify decimal", http.Header{"Retry-After": {"2.0"}}, now, 2 * time.Second, true},
		{"fraction", http.Header{"Retry-After": {"1.5"}}, now, 1500 * time.Millisecond, true},
		{"optional white space", http.Header{"Retry-After": {" \t30 "}}, now, 30 * time.Second, true},
		{"leading zeros", http.Header{"Retry-After": {"007"}}, now, 7 * time.Second, true},
		{"draft B.1.4 IMF-fixdate from Date", http.Header{"Date": {date}, "Retry-After": {"Mon, 05 Aug 2019 09:27:05 GMT"}}, now, 5 * time.Second, true},
		{"RFC 850 from Date", http.Header{"Date": {date}, "Retry-After": {"Monday, 05-Aug-19 09:28:00 GMT"}}, now, time.Minute, true},
		{"asctime from Date", http.Header{"Date": {date}, "Retry-After": {"Mon Aug  5 09:29:00 2019"}}, now, 2 * time.Minute, true},
		{"past date clamps to zero", http.Header{"Date": {date}, "Retry-After": {"Fri, 31 Dec 1999 23:59:59 GMT"}}, now, 0, true},
		{"no Date: measured from now", http.Header{"Retry-After": {"Mon, 05 Aug 2019 09:37:00 GMT"}}, server.Add(4 * time.Minute), 6 * time.Minute, true},
		{"invalid Date: measured from now", http.Header{"Date": {"yesterday"}, "Retry-After": {"Mon, 05 Aug 2019 09:37:00 GMT"}}, server.Add(4 * time.Minute), 6 * time.Minute, true},
		{"UTC instead of GMT, from Date", http.Header{"Date": {date}, "Retry-After": {"Mon, 05 Aug 2019 09:27:05 UTC"}}, now, 5 * time.Second, true},
		{"lower-case utc is invalid", http.Header{"Retry-After": {"Mon, 05 Aug 2019 09:27:05 utc"}}, now, 0, false},
		// A numeric zone, as RFC 5322 writes dates, was invalid; its
		// offset is applied.
		{"+0000 instead of GMT, from Date", http.Header{"Date": {date}, "Retry-After": {"Mon, 05 Aug 2019 09:27:05 +0000"}}, now, 5 * time.Second, true},
		{"-0000 instead of GMT, from Date", http.Header{"Date": {date}, "Retry-After": {"Mon, 05 Aug 2019 09:27:05 -0000"}}, now, 5 * time.Second, true},
		{"+0200 applied", http.Header{"Date": {date}, "Retry-After": {"Mon, 05 Aug 2019 11:27:05 +0200"}}, now, 5 * time.Second, true},
		// A day of one digit, as RFC 1123 and RFC 5322 allow and Java's
		// DateTimeFormatter.RFC_1123_DATE_TIME writes, was invalid.
		{"one-digit day, from Date", http.Header{"Date": {date}, "Retry-After": {"Mon, 5 Aug 2019 09:27:05 GMT"}}, now, 5 * time.Second, true},
		{"one-digit day, +0200 applied", http.Header{"Date": {date}, "Retry-After": {"Mon, 5 Aug 2019 11:27:05 +0200"}}, now, 5 * time.Second, true},
		{"-0730 applied", http.Header{"Date": {date}, "Retry-After": {"Mon, 05 Aug 2019 01:57:05 -0730"}}, now, 5 * time.Second, true},
		{"offset of 24 hours is invalid", http.Header{"Retry-After": {"Mon, 05 Aug 2019 09:27:05 +2400"}}, now, 0, false},
		{"offset without a sign is invalid", http.Header{"Retry-After": {"Mon, 05 Aug 2019 09:27:05 0000"}}, now, 0, false},
		{"RFC 850 with an offset is invalid", http.Header{"Retry-After": {"Monday, 05-Aug-19 09:27:05 +0000"}}, now, 0, false},
		{"lower-case date is invalid", http.Header{"Retry-After": {"mon, 05 aug 2019 09:27:05 gmt"}}, now, 0, false},
		{"retry-after-ms wins", http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, now, 1500 * time.Millisecond, true},
		{"retry-after-ms fraction", http.Header{"Retry-After-Ms": {"0.5"}}, now, 500 * time.Microsecond, true},
		{"invalid retry-after-ms falls back", http.Header{"Retry-After-Ms": {"soon"}, "Retry-After": {"2"}}, now, 2 * time.Second, true},
		{"negative", http.Header{"Retry-After": {"-1"}}, now, 0, false},
		{"exponent", http.Header{"Retry-After": {"1e3"}}, now, 0, false},
		{"hex", http.Header{"Retry-After": {"0x10"}}, now, 0, false},
		{"NaN", http.Header{"Retry-After": {"NaN"}}, now, 0, false},
		{"Inf", http.Header{"Retry-After": {"Inf"}}, now, 0, false},
		{"underscore", http.Header{"Retry-After": {"1_000"}}, now, 0, false},
		{"trailing dot", http.Header{"Retry-After": {"5."}}, now, 0, false},
		{"leading dot", http.Header{"Retry-After": {".5"}}, now, 0, false},
		{"unit", http.Header{"Retry-After": {"5s"}}, now, 0, false},
		{"empty", http.Header{"Retry-After": {""}}, now, 0, false},
		{"two lines", http.Header{"Retry-After": {"5", "6"}}, now, 0, false},
		{"comma-joined", http.Header{"Retry-After": {"5, 6"}}, now, 0, false},
		{"negative retry-after-ms only", http.Header{"Retry-After-Ms": {"-5"}}, now, 0, false},
		{"draft DoS example", http.Header{"Retry-After": {"1000000"}}, now, 1000000 * time.Second, true},
		{"too large for a Duration saturates", http.Header{"Retry-After": {"9999999999999"}}, now, math.MaxInt64, true},
		{"too large for int64 saturates", http.Header{"Retry-After": {"99999999999999999999"}}, now, math.MaxInt64, true},
		{"huge retry-after-ms saturates", http.Header{"Retry-After-Ms": {"99999999999999999999"}}, now, math.MaxInt64, true},
		{"hand-built lower-case names", http.Header{"retry-after": {"Mon, 05 Aug 2019 09:27:05 GMT"}, "date": {date}}, now, 5 * time.Second, true},
		{"vendor hints are not read", http.Header{"X-Retry-In": {"666.666666ms"}, "X-Ratelimit-Retry-After": {"5"}, "X-Rate-Limit-Reset-Tokens": {"55"}}, now, 0, false},
	}
}

func TestRetryAfter(t *testing.T) {
	tests := retryAfterTests()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RetryAfter(tt.header, tt.now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("RetryAfter(%v) = %v, %v, want %v, %v", tt.header, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestRetryAfterTwoDigitYear(t *testing.T) {
	// RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is the
	// most recent past year with those digits.
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{"Retry-After": {"Thursday, 01-Jan-76 00:00:00 GMT"}} // 2076 is exactly 50 years ahead
	if got, ok := RetryAfter(h, now); !ok || got != time.Date(2076, 1, 1, 0, 0, 0, 0, time.UTC).Sub(now) {
		t.Errorf("RetryAfter(%v) = %v, %v, want 2076-01-01", h, got, ok)
	}
	h = http.Header{"Retry-After": {"Friday, 01-Jan-77 00:00:00 GMT"}} // 2077 is too far: 1977
	if got, ok := RetryAfter(h, now); !ok || got != 0 {
		t.Errorf("RetryAfter(%v) = %v, %v, want 0, true (1977 is past)", h, got, ok)
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, tt := range retryAfterTests() {
		f.Add(tt.header.Get("Retry-After"), tt.header.Get("Retry-After-Ms"), tt.header.Get("Date"), tt.now.Unix())
	}
	f.Fuzz(func(t *testing.T, retryAfter, ms, date string, unix int64) {
		h := http.Header{}
		for k, v := range map[string]string{"Retry-After": retryAfter, "Retry-After-Ms": ms, "Date": date} {
			if v != "" {
				h.Set(k, v)
			}
		}
		now := time.Unix(unix, 0)
		d, ok := RetryAfter(h, now)
		if d < 0 || !ok && d != 0 {
			t.Fatalf("RetryAfter(%v) = %v, %v", h, d, ok)
		}
		if d2, ok2 := RetryAfter(h, now); d2 != d || ok2 != ok {
			t.Fatalf("RetryAfter(%v) = %v, %v, then %v, %v", h, d, ok, d2, ok2)
		}
	})
}
