package otelpolite

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// overflowed returns the series of an instrument that the SDK merged
// into its overflow series (attribute otel.metric.overflow), and the
// number of series.
func overflowed(t *testing.T, reader *sdkmetric.ManualReader, name string) (over []string, n int) {
	t.Helper()
	for set := range ints(t, collect(t, reader)[name]) {
		n++
		if strings.Contains(set, "otel.metric.overflow") {
			over = append(over, set)
		}
	}
	return over, n
}

// With every default (Config{} and the SDK's MeterProvider, whose
// cardinality limit is 2000 series an instrument), the series otelpolite
// allowed outgrew what the SDK keeps: MaxHosts named 1000 hosts, each with
// a series per kind of event (a crawler paced on every host, its
// responses observed: wait and observe), so the named hosts alone filled
// the SDK's limit. Any later series (here, the Store failing) was merged
// by the SDK into one otel.metric.overflow series, without
// polite.event.kind: an alert on
// polite.client.events{polite.event.kind="store-down"} never fired.
// MaxHosts, meant to bound series with "_OTHER", bounded nothing at its
// default (1000; 100 now).
func TestDefaultsWithinSDKCardinalityEvents(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		t.Fatal(err)
	}
	tr := &polite.Transport{}
	m.Instrument(tr)
	for i := range 1000 { // a crawler's hosts
		host := fmt.Sprintf("h%d.test", i)
		req, _ := http.NewRequest(http.MethodGet, "https://"+host+"/", nil)
		tr.OnEvent(polite.Event{Kind: polite.EventWait, Time: time.Now(), Key: "https://" + host, Request: req, Attempt: 1, Wait: time.Second, Reason: polite.ReasonPace})
		tr.OnEvent(polite.Event{Kind: polite.EventObserve, Time: time.Now(), Key: "https://" + host, Request: req, Attempt: 1, Status: 200, Quotas: 1})
	}
	tr.OnEvent(polite.Event{Kind: polite.EventStoreDown, Time: time.Now(), Key: "https://h0.test", Err: fmt.Errorf("redis: connection refused")})

	got := ints(t, collect(t, reader)["polite.client.events"])
	if got["polite.event.kind=store-down"] != 1 {
		t.Errorf("polite.client.events{polite.event.kind=store-down} = %d, want 1", got["polite.event.kind=store-down"])
	}
	if over, n := overflowed(t, reader, "polite.client.events"); len(over) > 0 {
		t.Errorf("polite.client.events: %d series, of which the SDK's overflow %v: events lost their kind and host", n, over)
	}
}

// The quota gauge has, by Config.MaxKeys' own account, up to 17·MaxKeys
// series: 17000 at the default of 1000, where the SDK keeps 2000. 700 keys
// with three quotas each (well under MaxKeys) overflowed: some keys'
// quotas were reported as one otel.metric.overflow series, a gauge value
// of no key.
func TestDefaultsWithinSDKCardinalityGauge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		if err != nil {
			t.Fatal(err)
		}
		const keys = 700
		cfg := ratelimittest.Config{Dialect: ratelimittest.IETF, Policies: []ratelimittest.Policy{
			{Name: "minute", Quota: 100, Window: time.Minute},
			{Name: "hour", Quota: 1000, Window: time.Hour},
			{Name: "day", Quota: 10000, Window: 24 * time.Hour},
		}}
		servers := hosts{}
		for i := range keys {
			servers[fmt.Sprintf("h%d.test", i)] = ratelimittest.NewHandler(cfg)
		}
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: servers}}
		m.Instrument(tr)
		client := &http.Client{Transport: tr}
		for i := range keys {
			resp, err := client.Get(fmt.Sprintf("http://h%d.test/", i))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if st, _ := tr.Inspect("http://h0.test", time.Now()); len(st.Policies) != 3 {
			t.Fatalf("h0.test holds %d quotas, want 3", len(st.Policies))
		}
		over, n := overflowed(t, reader, "polite.client.quota.remaining")
		if len(over) > 0 {
			t.Errorf("polite.client.quota.remaining: %d series for %d keys (MaxKeys by default), of which the SDK's overflow %v", n, keys, over)
		}
		runtime.KeepAlive(tr) // the gauge forgets the keys of a Transport collected
	})
}
