package otelpolite

import (
	"net/http"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// A Metrics may serve several Transports (Metrics doc), and the package
// documentation wires each Transport with New and Instrument, without
// Close. Once a Transport had seen one event, the quota gauge's key set
// held it (keyID.src.t) for as long as the Metrics lived, and the
// MeterProvider holds the Metrics (its registered callback): a Transport
// the program dropped, with its Budget, was never collected (until
// MaxKeys other keys pushed its key out), and its budget went on being
// inspected and reported at every collection. A service that makes a
// Transport per job or per tenant kept them all.
func TestDroppedTransportIsCollected(t *testing.T) {
	for _, tt := range []struct {
		name   string
		shared bool // one Metrics for every Transport, else New per Transport (the package doc's five lines)
	}{
		{"one Metrics, many Transports", true},
		{"New per Transport, as the package doc wires one", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			shared, err := New(Config{MeterProvider: provider})
			if err != nil {
				t.Fatal(err)
			}
			h := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 1000, Window: time.Minute}}})
			const n = 20
			var dropped []weak.Pointer[polite.Transport]
			for range n {
				func() {
					m := shared
					if !tt.shared {
						m, err = New(Config{MeterProvider: provider})
						if err != nil {
							t.Fatal(err)
						}
					}
					tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
					m.Instrument(tr)
					resp, err := (&http.Client{Transport: tr}).Get("http://api.test/")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					dropped = append(dropped, weak.Make(tr))
				}()
			}
			runtime.GC()
			runtime.GC()
			got := 0
			for _, w := range dropped {
				if w.Value() == nil {
					got++
				}
			}
			if got != n {
				t.Errorf("%d of %d dropped Transports collected; the Metrics (reachable from the MeterProvider) keeps the others alive, budgets and all", got, n)
			}
			runtime.KeepAlive(shared)
			runtime.KeepAlive(provider)
		})
	}
}
