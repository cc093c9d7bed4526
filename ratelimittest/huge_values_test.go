package ratelimittest_test

import (
	"math"
	"testing"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// A streamed request is in flight for Latency plus Stream. With a Latency
// near the largest Duration, the sum wrapped around to a negative
// duration, and Ideal said 0s for requests that take centuries.
func TestIdealLatencyPlusStreamSaturates(t *testing.T) {
	for _, latency := range []time.Duration{math.MaxInt64, math.MaxInt64 - time.Second/2} {
		cfg := ratelimittest.Config{Latency: latency, Stream: time.Second}
		if got := ratelimittest.Ideal(cfg, 3, 1); got != math.MaxInt64 {
			t.Errorf("Ideal with Latency %d and Stream 1s = %v, want the largest Duration", latency, got)
		}
	}
}
