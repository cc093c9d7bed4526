package polite

import (
	"testing"
	"time"
)

// Crawl-delay and Request-rate share one table of units, and a unit
// written out never paces an origin faster than the file asks. Crawl-delay
// read its unit after a space ("10 min" is 10 minutes), but Request-rate
// was cut at the first space, what followed taken for a time span
// ("1/5s 0600-0845"): "1/10 min" was read as one request every 10
// seconds, 60 times faster than asked, and "1/1 day" as one a second.
func TestRequestRateUnitAfterSpace(t *testing.T) {
	for _, tt := range []struct {
		line string
		want time.Duration
	}{
		{"Crawl-delay: 10 min", 10 * time.Minute}, // for contrast: read as asked
		{"Request-rate: 1/10 min", 10 * time.Minute},
		{"Request-rate: 1/1 day", 24 * time.Hour},
		{"Request-rate: 2/30 seconds", 15 * time.Second},
		{"Request-rate: 1/10 min 0600-0845", 10 * time.Minute},
		{"Request-rate: 1/10\tmin", 10 * time.Minute},
	} {
		f := parseRobots([]byte("User-agent: *\n"+tt.line+"\n"), "mybot")
		if f.interval < tt.want {
			t.Errorf("%q: interval %v, want %v (never faster than the file asks)", tt.line, f.interval, tt.want)
		}
	}
}

// A time span after the rate is no unit: the rate is in seconds.
func TestRequestRateTimeSpanNoUnit(t *testing.T) {
	for _, line := range []string{"Request-rate: 1/10 0600-0845", "Request-rate: 1/10s 0600-0845", "Request-rate: 1/10 x"} {
		f := parseRobots([]byte("User-agent: *\n"+line+"\n"), "mybot")
		if f.interval != 10*time.Second {
			t.Errorf("%q: interval %v, want 10s", line, f.interval)
		}
	}
}
