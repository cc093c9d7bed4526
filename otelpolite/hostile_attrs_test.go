package otelpolite

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// TestHostileBytesKeepScrape: a host or a policy name chosen by a
// server (a link to "http://%ff.test/", which net/url decodes to the byte
// 0xff, or an X-RateLimit-Resource with a byte that is not UTF-8) went
// into an attribute value as it was. The Prometheus exporter the package
// documentation recommends rejects such a label, and promhttp's handler
// then failed the whole scrape (HTTP 500), every metric of the process
// with it. Such values are made valid UTF-8 first.
func TestHostileBytesKeepScrape(t *testing.T) {
	for _, tt := range []struct {
		name     string
		url      string
		resource string
	}{
		{"host of a link", "http://%ff.test/", "core"},
		{"policy name of a response", "http://ok.test/", "core\xff"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reg := prometheus.NewRegistry()
				exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
				if err != nil {
					t.Fatal(err)
				}
				m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))})
				if err != nil {
					t.Fatal(err)
				}
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					// GitHub's dialect: the policy is named by X-RateLimit-Resource.
					w.Header().Set("X-RateLimit-Limit", "60")
					w.Header().Set("X-RateLimit-Remaining", "59")
					w.Header().Set("X-RateLimit-Reset", "30")
					w.Header().Set("X-RateLimit-Resource", tt.resource)
				})}}
				m.Instrument(tr)
				resp, err := (&http.Client{Transport: tr}).Get(tt.url)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()

				rec := httptest.NewRecorder()
				promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
				if rec.Code != http.StatusOK {
					t.Errorf("/metrics answered %d after one request to %s: %s", rec.Code, tt.url, firstLine(rec.Body.String()))
				}
			})
		})
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestMaxKeysKeepsNewest: with MaxKeys 1, a key seen in an event
// after another's should be the one the gauge keeps ("the one seen least
// recently in an event being dropped when a new one comes"). keySet.seen
// ordered keys by Event.Time alone and, on a tie (two events of the same
// instant: a coarse clock, or a synctest bubble), dropped whichever key
// sync.Map's Range yielded first: often the one that just came, so that
// the gauge went on reporting the stale key. It orders them as seen now.
func TestMaxKeysKeepsNewest(t *testing.T) {
	const trials = 20
	var wrong int
	for range trials {
		synctest.Test(t, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), MaxKeys: 1})
			if err != nil {
				t.Fatal(err)
			}
			cfg := ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 5, Window: time.Minute}}}
			tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: hosts{
				"a.test": ratelimittest.NewHandler(cfg),
				"b.test": ratelimittest.NewHandler(cfg),
			}}}
			m.Instrument(tr)
			client := &http.Client{Transport: tr}
			for _, u := range []string{"http://a.test/", "http://b.test/"} {
				resp, err := client.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			keys := gaugeKeys(t, reader)
			if !slices.Equal(keys, []string{"http://b.test"}) {
				wrong++
			}
		})
	}
	if wrong > 0 {
		t.Errorf("in %d of %d runs the gauge kept the key seen before (or none), not http://b.test, seen last", wrong, trials)
	}
}
