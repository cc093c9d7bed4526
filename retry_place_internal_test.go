package polite

import (
	"testing"
	"time"
)

// A retry kept its first attempt's instant as its place even when the
// clock had stepped back since: a place after the instant it asked at,
// which held it behind the requests that asked after it.
func TestRetryPlaceAfterClockStepBack(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) reading { return reading{b: newClockBase(t0.Add(d))} }
	if got := retryPlace(at(0), at(2*time.Second)); !got.Equal(t0) {
		t.Errorf("a retry 2s after its first attempt: place %v, want the first attempt's, %v", got, t0)
	}
	if got := retryPlace(at(0), at(-5*time.Second)); !got.Equal(t0.Add(-5 * time.Second)) {
		t.Errorf("a retry after the clock stepped back 5s: place %v, want when it asks, %v", got, t0.Add(-5*time.Second))
	}
}
