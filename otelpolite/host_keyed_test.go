package otelpolite

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// One Transport, one request, one host: every instrument names it as
// polite keys it. The gauge read server.address from the key, and the
// requests counter and the events named the host as the request spelled
// it: "bücher.test" on the counters and "xn--bcher-kva.test" on the gauge,
// and likewise an IPv6 literal written out, or an IPv4-mapped address.
func TestHostNamedAsKeyed(t *testing.T) {
	for _, tt := range []struct{ name, url string }{
		{"idna", "http://bücher.test/"},
		{"ipv6 written out", "http://[2001:db8:0:0:0:0:0:1]/"},
		{"ipv4-mapped", "http://[::ffff:192.0.2.1]/"},
		// A zone keeps its case in the key (interface names are
		// case-sensitive): the gauge lower-cased it.
		{"zone", "http://[fe80::1%25En0]/"},
		// Two trailing dots: the key kept one, which the gauge,
		// normalising the key's name again, cut.
		{"dots", "http://API.test../x"},
		{"dots and port", "http://api.test..:8080/x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, reader := manualMetrics(t)
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{
					Policies: []ratelimittest.Policy{{Quota: 5, Window: 10 * time.Second}},
				})}}
				m.Instrument(tr)
				resp, err := (&http.Client{Transport: tr}).Get(tt.url)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := collect(t, reader)
				reqs := serverAddresses(t, ints(t, got["polite.client.requests"]))
				events := serverAddresses(t, ints(t, got["polite.client.events"]))
				gauge := serverAddresses(t, ints(t, got["polite.client.quota.remaining"]))
				if len(gauge) == 0 {
					t.Fatal("no gauge series")
				}
				for h := range gauge {
					if !reqs[h] || !events[h] {
						t.Errorf("gauge server.address %v; requests counter %v, events %v: one origin, one request, named two ways", gauge, reqs, events)
					}
				}
			})
		})
	}
}
