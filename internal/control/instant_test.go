package control

import (
	"testing"
	"time"
)

func TestInstantIsUnixNano(t *testing.T) {
	// Within its range, instant is t.UnixNano, with or without a
	// monotonic reading, in any location.
	now := time.Now()
	east := time.FixedZone("east", 5*3600+1800)
	for _, tt := range []time.Time{
		now, now.Round(0), now.In(east), now.Add(-time.Hour),
		time.Unix(0, 1), time.Unix(1, 999999999), time.Unix(0, 999999999),
		time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1970, 1, 1, 0, 0, 0, 1, east),
	} {
		if got, want := instant(tt), max(tt.UnixNano(), 1); tt.Unix() < maxInstant/int64(time.Second) && tt.Unix() >= 0 && got != want {
			t.Errorf("instant(%v) = %d, want %d", tt, got, want)
		}
	}
	if got := instant(time.Unix(-1, 0)); got != 1 {
		t.Errorf("instant before 1970 = %d, want 1", got)
	}
	if got := instant(time.Unix(maxInstant/int64(time.Second), 0)); got != maxInstant {
		t.Errorf("instant at the end = %d, want maxInstant", got)
	}
}
