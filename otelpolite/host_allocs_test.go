package otelpolite

import (
	"net/http"
	"testing"
	"time"

	"github.com/politehttp/polite"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Recording an event allocates nothing once its attributes were seen
// (BenchmarkOnEvent's promise), whatever the spelling of its host. Named
// as polite keys it at every event, an IPv6 literal, even in its
// canonical form, was formatted anew each time (2 allocations), and an
// upper-case or Unicode host normalised anew (24 and 120).
func TestOnEventAllocsByHost(t *testing.T) {
	for _, tt := range []struct {
		name, url string
		max       float64
	}{
		{"ipv6 loopback", "http://[::1]/", 0},
		{"ipv6 loopback, port", "http://[::1]:8080/", 0},
		{"ipv6 canonical", "https://[2001:db8::1]/", 0},
		{"upper case", "https://API.Example/", 0},
		{"unicode", "https://bücher.example/", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))})
			if err != nil {
				t.Fatal(err)
			}
			req, err := http.NewRequest(http.MethodGet, tt.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			e := polite.Event{Kind: polite.EventRetry, Request: req, Status: 429, Reason: polite.ReasonRetryAfter, Wait: time.Second}
			m.OnEvent(e)
			if got := testing.AllocsPerRun(100, func() { m.OnEvent(e) }); got > tt.max {
				t.Errorf("OnEvent for %s: %v allocations an event, want at most %v (as before 62c6a92)", tt.url, got, tt.max)
			}
		})
	}
}
