package zone

import (
	"testing"
	"time"
)

func TestGMT(t *testing.T) {
	for _, tt := range []struct {
		in, gmt string
		offset  time.Duration
		ok      bool
	}{
		{"Fri, 04 Dec 2026 02:00:00 UTC", "Fri, 04 Dec 2026 02:00:00 GMT", 0, true},
		{"Fri, 04 Dec 2026 02:00:00 +0000", "Fri, 04 Dec 2026 02:00:00 GMT", 0, true},
		{"Fri, 04 Dec 2026 02:00:00 -0000", "Fri, 04 Dec 2026 02:00:00 GMT", 0, true},
		{"Fri, 04 Dec 2026 03:00:00 +0100", "Fri, 04 Dec 2026 03:00:00 GMT", time.Hour, true},
		{"Fri, 04 Dec 2026 01:30:00 -0030", "Fri, 04 Dec 2026 01:30:00 GMT", -30 * time.Minute, true},
		{"Fri, 04 Dec 2026 02:00:00 GMT", "", 0, false},
		{"Fri, 04 Dec 2026 02:00:00 +2400", "", 0, false},
		{"Fri, 04 Dec 2026 02:00:00 +0060", "", 0, false},
		{"Fri, 04 Dec 2026 02:00:00 0100", "", 0, false},
		{"Fri, 04 Dec 2026 02:00:00 +01:00", "", 0, false},
		{"Fri, 04 Dec 2026 02:00:00 +01a0", "", 0, false},
		{"", "", 0, false},
		{"Fri, 4 Dec 2026 02:00:00 GMT", "Fri, 04 Dec 2026 02:00:00 GMT", 0, true},
		{"Fri, 4 Dec 2026 02:00:00 UTC", "Fri, 04 Dec 2026 02:00:00 GMT", 0, true},
		{"Fri, 4 Dec 2026 03:00:00 +0100", "Fri, 04 Dec 2026 03:00:00 GMT", time.Hour, true},
		{"Fri, 4 Dec 2026 02:00:00 CET", "", 0, false},
		{"Fri, 4x Dec 2026 02:00:00 GMT", "", 0, false},
		{"Fri, 12 Dec 2026 02:00:00 +01:00", "", 0, false},
	} {
		gmt, offset, ok := GMT(tt.in)
		if gmt != tt.gmt || offset != tt.offset || ok != tt.ok {
			t.Errorf("GMT(%q) = %q, %v, %v; want %q, %v, %v", tt.in, gmt, offset, ok, tt.gmt, tt.offset, tt.ok)
		}
	}
}
