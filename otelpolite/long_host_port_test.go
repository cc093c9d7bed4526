package otelpolite

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// serverAddresses returns the server.address values of the series of one
// instrument.
func serverAddresses(t *testing.T, sets map[string]int64) map[string]bool {
	out := map[string]bool{}
	for set := range sets {
		for kv := range strings.SplitSeq(set, ",") {
			if v, ok := strings.CutPrefix(kv, "server.address="); ok {
				out[v] = true
			}
		}
	}
	return out
}

// The requests counter named a host too long for polite to keep by the
// digest of the host alone, as the request spelled it, where polite keys
// the origin by the digest of its host in lower case, without a trailing
// dot, with its port: one origin had two server.address series (the
// counter's and the events' and gauge's), and a 256-byte host with a port
// polite digests was named whole.
func TestLongHostNamedAlikeWithPort(t *testing.T) {
	for _, tt := range []struct{ name, hostport string }{
		{"long host, port 8080", strings.Repeat("a", 400) + ".example:8080"},
		{"long host, trailing dot", strings.Repeat("a", 400) + ".example."},
		{"256-byte host, port 8080", strings.Repeat("a", 248) + ".example:8080"},
		{"long Unicode host", strings.Repeat("ü", 130) + ".example"},
		{"upper-case long host", strings.Repeat("A", 400) + ".EXAMPLE"},
		// Hashed as the request spelled them, these were named otherwise
		// by the requests counter than by the events and the gauge.
		{"long host, port of leading zeros", strings.Repeat("a", 400) + ".example:0008080"},
		{"long host, port 0", strings.Repeat("a", 400) + ".example:0"},
		{"long host, port past 65535", strings.Repeat("a", 400) + ".example:99999"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, reader := manualMetrics(t)
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{
					Policies: []ratelimittest.Policy{{Quota: 5, Window: 10 * time.Second}},
				})}}
				var key string
				tr.OnEvent = func(e polite.Event) { key = e.Key }
				m.Instrument(tr)
				resp, err := (&http.Client{Transport: tr}).Get("http://" + tt.hostport + "/x")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := collect(t, reader)
				reqs := serverAddresses(t, ints(t, got["polite.client.requests"]))
				events := serverAddresses(t, ints(t, got["polite.client.events"]))
				gauge := serverAddresses(t, ints(t, got["polite.client.quota.remaining"]))
				short := func(m map[string]bool) []string {
					var s []string
					for k := range m {
						s = append(s, k[:min(len(k), 24)]+"…")
					}
					return s
				}
				if len(reqs) != 1 || len(events) != 1 || len(gauge) != 1 {
					t.Fatalf("want one server.address per instrument; requests %v, events %v, gauge %v", short(reqs), short(events), short(gauge))
				}
				for a := range reqs {
					if !events[a] || !gauge[a] {
						t.Errorf("key %.30s…: polite.client.requests names the host %q, events %v, gauge %v: want one name (the key's digest)",
							key, a[:min(len(a), 40)], short(events), short(gauge))
					}
				}
			})
		})
	}
}
