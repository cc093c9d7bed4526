package polite

import (
	"math"
	"testing"
	"time"
)

func TestSince(t *testing.T) {
	now := time.Now()
	tests := []time.Time{
		now,
		now.Add(1500 * time.Millisecond).Round(0),
		now.Add(-36 * time.Hour).Round(0),
		time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC),
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
	}
	const far = 200 * 365 * 24 * time.Hour
	for _, d := range tests {
		got, want := since(now, d), d.Sub(now)
		switch {
		case want == math.MinInt64 && got < -far, want == math.MaxInt64 && got > far:
			// saturated, as Sub saturates, if not to the same nanosecond
		case got != want:
			t.Errorf("since(now, %v) = %v, want %v", d, got, want)
		}
	}
}
