package otelpolite_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/otelpolite"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Export polite's metrics to Prometheus through the OpenTelemetry Prometheus
// exporter. A real program serves promhttp.Handler() on /metrics and uses
// the default registerer; this one gathers its own registry once, to show
// what is exported.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"default";q=100;w=60`)
		w.Header().Set("RateLimit", `"default";r=99;t=60`)
	}))
	defer srv.Close()

	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		log.Fatal(err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))

	// The five lines that wire a Transport:
	metrics, err := otelpolite.New(otelpolite.Config{MeterProvider: provider})
	if err != nil {
		log.Fatal(err)
	}
	t := &polite.Transport{}
	metrics.Instrument(t)
	client := &http.Client{Transport: t}

	resp, err := client.Get(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()

	families, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "polite_") {
			continue // target_info
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if !strings.HasPrefix(l.GetName(), "otel_scope_") {
					labels = append(labels, l.GetName())
				}
			}
			fmt.Println(f.GetName(), m.GetCounter().GetValue()+m.GetGauge().GetValue(), strings.Join(labels, " "))
		}
	}
	_ = promhttp.Handler // http.Handle("/metrics", promhttp.Handler())

	// Output:
	// polite_client_events_total 1 http_request_method polite_event_kind server_address server_port
	// polite_client_quota_remaining 99 polite_key polite_quota_policy polite_quota_source polite_quota_unit server_address server_port
	// polite_client_requests_total 1 http_request_method server_address server_port
}

// Setting OnEvent by hand, chaining an OnEvent the Transport already has.
// Wired this way, polite.client.requests and the quota gauge stay empty:
// prefer Instrument.
func ExampleMetrics_OnEvent() {
	metrics, err := otelpolite.New(otelpolite.Config{})
	if err != nil {
		log.Fatal(err)
	}
	logEvent := func(e polite.Event) { log.Println(e.Kind, e.Key) }
	t := &polite.Transport{
		OnEvent: func(e polite.Event) {
			metrics.OnEvent(e)
			logEvent(e)
		},
	}
	_ = &http.Client{Transport: t}
}
