package polite

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWaitErrorText(t *testing.T) {
	until := time.Date(2026, 1, 2, 15, 4, 4, 200e6, time.UTC)
	tests := []struct {
		name string
		e    WaitError
		want string
	}{
		{"max wait", WaitError{Key: "http://127.0.0.1:44955", Delay: 24*time.Hour - 87521*time.Nanosecond, Until: until, Reason: ReasonRetryAfter, Limit: 10 * time.Minute},
			"polite: retry-after wait of 24h0m0s for http://127.0.0.1:44955 exceeds MaxWait (10m0s); raise Transport.MaxWait or retry after 2026-01-02T15:04:05Z"},
		{"context deadline", WaitError{Key: "https://api.example", Delay: 1234567 * time.Microsecond, Until: until, Reason: ReasonQuota, Deadline: true, Limit: 440897 * time.Nanosecond},
			"polite: quota wait of 1.235s for https://api.example exceeds the 441µs left before the request's context deadline; extend the context's deadline, or retry after 2026-01-02T15:04:05Z"},
		{"client timeout, waited", WaitError{Key: "key-0a1b2c3d", Delay: 26 * time.Second, Until: until, Reason: ReasonPace, Deadline: true, Limit: 16 * time.Second, Waited: 4*time.Second + 22*time.Microsecond, client: true},
			"polite: pace wait of 26s for key-0a1b2c3d exceeds the 16s left before the request's deadline (http.Client.Timeout, or its context's if earlier), after waiting 4s; raise http.Client.Timeout or the context's deadline, or retry after 2026-01-02T15:04:05Z"},
		{"on the second", WaitError{Key: "https://api.example", Delay: 11 * time.Minute, Until: until.Truncate(time.Second), Reason: ReasonQuota, Limit: 10 * time.Minute},
			"polite: quota wait of 11m0s for https://api.example exceeds MaxWait (10m0s); raise Transport.MaxWait or retry after 2026-01-02T15:04:04Z"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%s: Error() =\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
}

func TestRoundDuration(t *testing.T) {
	tests := []struct{ in, want time.Duration }{
		{0, 0},
		{440897 * time.Nanosecond, 441 * time.Microsecond},
		{1234567890 * time.Nanosecond, 1235 * time.Millisecond},
		{9999600 * time.Microsecond, 10 * time.Second},
		{12345 * time.Millisecond, 12300 * time.Millisecond},
		{24*time.Hour - 87521*time.Nanosecond, 24 * time.Hour},
		{-1500 * time.Microsecond, -2 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := roundDuration(tt.in); got != tt.want {
			t.Errorf("roundDuration(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// A Store's error that names a custom key, as it is or quoted, shows the
// key's fingerprint instead.
func TestStoreErrorHidesKey(t *testing.T) {
	const shown = "key-0a1b2c3d"
	for _, tt := range []struct{ key, err string }{
		{"Bearer sk-1", `update "Bearer sk-1": down`},
		{"Bearer sk-1", `update Bearer sk-1: down`},
		{`tok"en\1`, `update "tok\"en\\1": down`},
		{"tok\x01en", `update "tok\x01en": down`},
	} {
		e := &storeError{err: errors.New(tt.err), key: tt.key, shown: shown}
		if got, want := e.Error(), "polite: store: update "; !strings.HasPrefix(got, want) || !strings.Contains(got, shown) || strings.Contains(got, "tok") || strings.Contains(got, "sk-1") {
			t.Errorf("storeError{%q}.Error() = %q, want the key replaced by %s", tt.err, got, shown)
		}
	}
}
