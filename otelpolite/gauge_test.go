package otelpolite

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The gauge's key attributes were cut from the request's URL too: each key
// the gauge held kept its first request's whole URL alive (269,362 bytes a
// key for URLs of 256 KiB).
func TestGaugeKeysKeepNoURL(t *testing.T) {
	m, _ := manualMetrics(t)
	tr := &polite.Transport{}
	m.Instrument(tr)
	keptPerURL(t, "key", func(i int, req *http.Request) {
		tr.OnEvent(polite.Event{Kind: polite.EventObserve, Time: time.Now(), Key: fmt.Sprintf("http://h%d.test", i), Request: req, Attempt: 1, Status: 200, Quotas: 1})
	})
	runtime.KeepAlive(m)
}

// Two Transports with budgets of their own hold the same key, reached by
// two spellings of one origin. The doc promises one series, at the least
// left among them; server.address, the request's spelling, made two. Read
// from the key only when otelpolite recognised the spelling (case, a
// trailing dot, the default port), an IPv6 literal written out and
// shortened, an IPv4-mapped address and its IPv4 form, and a Unicode host
// and its ASCII form still made two, one with the wrong budget's quota.
func TestGaugeSameKeyTwoSpellings(t *testing.T) {
	for _, tt := range []struct{ name, a, b string }{
		{"case and dot", "http://api.test/", "http://API.test./"},
		{"ipv6 zeros", "http://[2001:db8:0:0:0:0:0:1]/", "http://[2001:db8::1]/"},
		{"ipv4-mapped", "http://[::ffff:192.0.2.1]/", "http://192.0.2.1/"},
		{"idna", "http://bücher.test/", "http://xn--bcher-kva.test/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, reader := manualMetrics(t)
				mk := func(q int64) *polite.Transport {
					h := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: q, Window: time.Minute}}})
					tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
					m.Instrument(tr)
					return tr
				}
				a, b := mk(5), mk(10)
				var keys []string
				for i, u := range []string{tt.a, tt.b} {
					tr := []*polite.Transport{a, b}[i]
					resp, err := (&http.Client{Transport: tr}).Get(u)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					st, _ := tr.Inspect(u, time.Now())
					keys = append(keys, st.Key)
				}
				if keys[0] != keys[1] {
					t.Fatalf("polite keys %q and %q apart; the test needs one key", keys[0], keys[1])
				}
				got := ints(t, collect(t, reader)["polite.client.quota.remaining"])
				least := int64(-1)
				for _, v := range got {
					least = v
				}
				if len(got) != 1 || least != 4 {
					t.Errorf("quota.remaining = %v; want one series for key %s, of 4 (the least left)", got, keys[0])
				}
			})
		})
	}
}

// slowStore is a Store that, once slow is set, answers no Update until the
// caller's context ends.
type slowStore struct {
	polite.MemoryStore
	slow atomic.Bool
}

func (s *slowStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.slow.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.MemoryStore.Update(ctx, key, fn)
}

// A collection whose context ended stayed in the gauge's callback, reading
// key after key from a Store that did not answer, 10 s each: 30 s for
// three keys, hours for the default 1000. It now stops at the first key
// it has not read, after the one under way.
func TestGaugeSlowStoreStopsAtContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, reader := manualMetrics(t)
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
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		var rm metricdata.ResourceMetrics
		err := reader.Collect(ctx, &rm)
		if d := time.Since(start); d > 10*time.Second+time.Second {
			t.Errorf("Collect with a 1s context took %v (err %v): the callback waits on the Store key after key", d, err)
		}
	})
}

// manualMetrics returns Metrics recording to a manual reader, and the
// reader.
func manualMetrics(t *testing.T) (*Metrics, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		t.Fatal(err)
	}
	return m, reader
}

// TestGaugeFirstEventWithoutRequest: an event without a request (an
// EventStoreUp or EventStoreDown found after RoundTrip returned, which
// polite documents as carrying no Request) that is a key's first leaves
// its gauge series with server.address and server.port once a later event
// has a request, and a custom key's budget inspectable. The series lacked
// them for good, and a custom key's reported nothing.
func TestGaugeFirstEventWithoutRequest(t *testing.T) {
	for _, custom := range []bool{false, true} {
		name := "default key"
		if custom {
			name = "custom key"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, _ := manualMetrics(t)
				tr := &polite.Transport{
					Base: &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{
						Policies: []ratelimittest.Policy{{Quota: 5, Window: 10 * time.Second}},
					})},
					Budget: &polite.Budget{},
				}
				key := "http://api.test"
				if custom {
					tr.Key = func(r *http.Request) string { return "tenant-42" }
				}
				m.Instrument(tr)
				client := &http.Client{Transport: tr}
				get := func() {
					resp, err := client.Get("http://api.test/x")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				get() // so that the budget holds the key
				shown := key
				if custom {
					st, ok := tr.Budget.Inspect("tenant-42", time.Now())
					if !ok {
						t.Fatal("no state")
					}
					shown = st.Key
				}
				// A fresh Metrics on the same Transport: its first event of the
				// key is a store event without a request, as polite reports it.
				m2, reader2 := manualMetrics(t)
				tr2 := &polite.Transport{Base: tr.Base, Budget: tr.Budget, Key: tr.Key}
				m2.Instrument(tr2)
				tr2.OnEvent(polite.Event{Kind: polite.EventStoreUp, Time: time.Now(), Key: shown})
				client = &http.Client{Transport: tr2}
				get()
				got := ints(t, collect(t, reader2)["polite.client.quota.remaining"])
				ok := false
				for set := range got {
					if strings.Contains(set, "server.address=api.test") && strings.Contains(set, "server.port=80") {
						ok = true
					}
				}
				if !ok {
					t.Errorf("quota.remaining series = %v; want one with server.address=api.test,server.port=80", got)
				}
			})
		})
	}
}

// TestGaugeDigestKeyAsEventsShowIt: for a host longer than polite keeps
// (digested as "~sha256-…"), the gauge's polite.key is the key as events
// show it, "http://~sha256-<hex>", and its server.address the digest, not
// the host of 400 bytes; it reported a hash of the key, and the host.
func TestGaugeDigestKeyAsEventsShowIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, reader := manualMetrics(t)
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Quota: 5, Window: 10 * time.Second}},
		})}}
		var shown string
		tr.OnEvent = func(e polite.Event) { shown = e.Key }
		m.Instrument(tr)
		host := strings.Repeat("a", 400) + ".example"
		resp, err := (&http.Client{Transport: tr}).Get("http://" + host + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for set := range ints(t, collect(t, reader)["polite.client.quota.remaining"]) {
			if !strings.Contains(set, "polite.key="+shown+",") || strings.Contains(set, "aaaa") || !strings.Contains(set, "server.address=~sha256-") {
				k, _, _ := strings.Cut(set, ",")
				t.Errorf("gauge %s; want polite.key=%s, as polite's events show the key", k, shown)
			}
		}
	})
}
