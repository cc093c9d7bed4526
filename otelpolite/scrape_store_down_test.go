package otelpolite

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// The gauge's callback stopped reading a Store that does not answer only
// when the collection's context ended (TestGaugeSlowStoreStopsAtContext).
// The Prometheus exporter the package documentation recommends collects
// with context.TODO(), which never ends: a scrape read key after key, 10 s
// each (Inspect's Update, which neither heeded nor recorded that the Store
// was down): 30 s for three keys, close to three hours for the default
// MaxKeys, holding the SDK's pipeline lock so that every later scrape
// queued behind it. A scrape waits on a dead Store once.
func TestPrometheusScrapeStoreDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		exp, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))})
		if err != nil {
			t.Fatal(err)
		}
		store := &slowStore{}
		cfg := ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 5, Window: time.Minute}}}
		tr := &polite.Transport{Budget: &polite.Budget{Store: store}, Base: &ratelimittest.Transport{Handler: hosts{
			"a.test": ratelimittest.NewHandler(cfg), "b.test": ratelimittest.NewHandler(cfg), "c.test": ratelimittest.NewHandler(cfg),
		}}}
		m.Instrument(tr)
		for _, u := range []string{"http://a.test/", "http://b.test/", "http://c.test/"} {
			resp, err := (&http.Client{Transport: tr}).Get(u)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		store.slow.Store(true)
		start := time.Now()
		if _, err := reg.Gather(); err != nil {
			t.Logf("Gather: %v", err)
		}
		if d := time.Since(start); d > 10*time.Second+time.Second {
			t.Errorf("a Prometheus scrape of 3 keys took %v with the Store not answering; want at most one Store timeout (10s)", d)
		}
	})
}
