package polite

import (
	"testing"
	"time"
)

// TestBackoffSchedule keeps the table in the package documentation true.
func TestBackoffSchedule(t *testing.T) {
	bo := newBackoff()
	bo.RandomizationFactor = 0
	bo.Reset()
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute}
	for i, w := range want {
		if got := bo.NextBackOff(); got != w {
			t.Errorf("attempt %d: NextBackOff() = %v, want %v", i+1, got, w)
		}
	}
}
