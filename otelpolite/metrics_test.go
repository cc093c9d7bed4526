package otelpolite

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// hosts serves each host of a request with its own handler, so that one
// Transport talks to several rate-limited servers in memory.
type hosts map[string]http.Handler

func (h hosts) ServeHTTP(w http.ResponseWriter, r *http.Request) { h[r.Host].ServeHTTP(w, r) }

// collect reads every instrument of reader, as a map from instrument name
// to the metric.
func collect(t *testing.T, reader *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	out := make(map[string]metricdata.Metrics)
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != ScopeName {
			t.Errorf("scope = %q, want %q", sm.Scope.Name, ScopeName)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// enc spells an attribute set as "k=v,k=v", sorted by key.
func enc(s attribute.Set) string { return s.Encoded(attribute.DefaultEncoder()) }

// ints returns the values of an int64 sum or gauge by attribute set.
func ints(t *testing.T, m metricdata.Metrics) map[string]int64 {
	t.Helper()
	var dps []metricdata.DataPoint[int64]
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		if !d.IsMonotonic {
			t.Errorf("%s: sum is not monotonic", m.Name)
		}
		dps = d.DataPoints
	case metricdata.Gauge[int64]:
		dps = d.DataPoints
	case nil:
		return nil
	default:
		t.Fatalf("%s: data is %T", m.Name, m.Data)
	}
	out := make(map[string]int64)
	for _, dp := range dps {
		out[enc(dp.Attributes)] = dp.Value
	}
	return out
}

// The scripted run: three servers, each showing one side of polite.
//
//   - a.test states a quota of 3 per 10 s (IETF fields): four GETs, the
//     fourth waits about 10 s for the quota (reason quota); no refusal.
//   - b.test states nothing and admits 1 per 5 s: its second GET is refused
//     (429, Retry-After: 5), retried after 5 s, and then admitted.
//   - c.test asks for an hour with Retry-After, above MaxWait: its second GET
//     is refused and goes back to the caller (a give-up), and its third is
//     not sent at all (a *polite.WaitError).
func TestMetricsScripted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		if err != nil {
			t.Fatal(err)
		}
		base := &ratelimittest.Transport{Handler: hosts{
			"a.test": ratelimittest.NewHandler(ratelimittest.Config{
				Policies: []ratelimittest.Policy{{Quota: 3, Window: 10 * time.Second}},
			}),
			"b.test": ratelimittest.NewHandler(ratelimittest.Config{
				Dialect:  ratelimittest.RetryAfterOnly,
				Policies: []ratelimittest.Policy{{Quota: 1, Window: 5 * time.Second}},
			}),
			"c.test": ratelimittest.NewHandler(ratelimittest.Config{
				Dialect:    ratelimittest.RetryAfterOnly,
				RetryAfter: time.Hour,
				Policies:   []ratelimittest.Policy{{Quota: 1, Window: 5 * time.Second}},
			}),
		}}
		var chained int
		tr := &polite.Transport{Base: base, MaxWait: time.Minute, OnEvent: func(polite.Event) { chained++ }}
		m.Instrument(tr)
		client := &http.Client{Transport: tr}

		urls := []string{
			"http://a.test/1", "http://a.test/2", "http://a.test/3", "http://a.test/4",
			"http://b.test/1", "http://b.test/2",
			"http://c.test/1", "http://c.test/2", "http://c.test/3",
		}
		var waitErrs int
		for _, u := range urls {
			resp, err := client.Get(u)
			if err != nil {
				if werr := (*polite.WaitError)(nil); !errors.As(err, &werr) {
					t.Fatalf("Get(%s): %v", u, err)
				}
				waitErrs++
				continue
			}
			resp.Body.Close()
		}
		if waitErrs != 1 {
			t.Fatalf("%d WaitErrors, want 1 (c.test/3)", waitErrs)
		}

		got := collect(t, reader)
		const (
			a = "http.request.method=GET,server.address=a.test,server.port=80"
			b = "http.request.method=GET,server.address=b.test,server.port=80"
			c = "http.request.method=GET,server.address=c.test,server.port=80"
		)
		refused := func(host string) string {
			return "http.request.method=GET,http.response.status_code=429,polite.reason=retry-after,server.address=" + host + ",server.port=80"
		}
		kind := func(k, host string) string {
			return "http.request.method=GET,polite.event.kind=" + k + ",server.address=" + host + ",server.port=80"
		}
		tests := []struct {
			name string
			want map[string]int64
		}{
			{"polite.client.requests", map[string]int64{a: 4, b: 3, c: 2}},
			{"polite.client.refusals", map[string]int64{refused("b.test"): 1, refused("c.test"): 1}},
			{"polite.client.retries", map[string]int64{refused("b.test"): 1}},
			{"polite.client.give_ups", map[string]int64{refused("c.test"): 1}},
			{"polite.client.stops", nil},
			{"polite.client.local_refusals", map[string]int64{
				"http.request.method=GET,polite.reason=retry-after,server.address=c.test,server.port=80": 1,
			}},
			{"polite.client.events", map[string]int64{
				kind("observe", "a.test"): 4, kind("wait", "a.test"): 1,
				kind("retry", "b.test"): 1, kind("wait", "b.test"): 1,
				kind("give-up", "c.test"): 1, kind("wait-error", "c.test"): 1,
			}},
			{"polite.client.quota.remaining", map[string]int64{
				"polite.key=http://a.test,polite.quota.policy=default,polite.quota.source=server,polite.quota.unit=requests,server.address=a.test,server.port=80": 2,
			}},
		}
		for _, tt := range tests {
			if g := ints(t, got[tt.name]); !reflect.DeepEqual(g, tt.want) && (len(g) != 0 || len(tt.want) != 0) {
				t.Errorf("%s = %v, want %v", tt.name, g, tt.want)
			}
		}
		// A give-up may have no response (a connection error): counted
		// as a request, as local refusals are.
		if u := got["polite.client.give_ups"].Unit; u != "{request}" {
			t.Errorf("give_ups unit = %q, want {request}", u)
		}
		if chained != 9 {
			t.Errorf("the Transport's own OnEvent was called %d times, want 9 (as many events as were counted)", chained)
		}

		// Waits: a.test waited its quota's window, b.test the Retry-After;
		// each by a little more (jitter lengthens pauses, never shortens).
		h, ok := got["polite.client.wait.duration"].Data.(metricdata.Histogram[float64])
		if !ok {
			t.Fatalf("polite.client.wait.duration: data is %T", got["polite.client.wait.duration"].Data)
		}
		floors := map[string]float64{
			sorted(a + ",polite.reason=quota"):       10,
			sorted(b + ",polite.reason=retry-after"): 5,
		}
		for _, dp := range h.DataPoints {
			k := enc(dp.Attributes)
			floor, ok := floors[k]
			if !ok {
				t.Errorf("wait.duration has a point for %s", k)
				continue
			}
			delete(floors, k)
			if dp.Count != 1 || dp.Sum < floor || dp.Sum > floor*1.1 {
				t.Errorf("wait.duration{%s}: count %d, sum %.3fs; want 1 wait in [%gs, %gs]", k, dp.Count, dp.Sum, floor, floor*1.1)
			}
		}
		if len(floors) > 0 {
			t.Errorf("wait.duration has no point for %v", slices.Collect(maps.Keys(floors)))
		}
		if got := got["polite.client.wait.duration"].Unit; got != "s" {
			t.Errorf("wait.duration unit = %q, want s", got)
		}
	})
}

// sorted sorts the comma-separated pairs of s, as enc spells them.
func sorted(s string) string {
	kv := strings.Split(s, ",")
	slices.Sort(kv)
	return strings.Join(kv, ",")
}

// A custom key may hold a credential: the gauge shows a fingerprint of it,
// and the secret appears nowhere in what the reader collects.
func TestMetricsCustomKeyNeverShown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const secret = "Bearer sk-live-do-not-print"
		reader := sdkmetric.NewManualReader()
		m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		if err != nil {
			t.Fatal(err)
		}
		tr := &polite.Transport{
			Base: &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{
				Policies: []ratelimittest.Policy{{Quota: 5, Window: 10 * time.Second}},
			})},
			Key: func(r *http.Request) string { return r.Header.Get("Authorization") },
		}
		var shown string // the key as polite shows it: its fingerprint
		tr.OnEvent = func(e polite.Event) { shown = e.Key }
		m.Instrument(tr)
		client := &http.Client{Transport: tr}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/x?token=q-secret", nil)
		req.Header.Set("Authorization", secret)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()

		var rm metricdata.ResourceMetrics
		if err := reader.Collect(t.Context(), &rm); err != nil {
			t.Fatal(err)
		}
		if dump := fmt.Sprintf("%+v", rm); strings.Contains(dump, "sk-live") || strings.Contains(dump, "q-secret") {
			t.Errorf("collected metrics hold the secret key or query: %s", dump)
		}
		got := ints(t, collect(t, reader)["polite.client.quota.remaining"])
		if !strings.HasPrefix(shown, "key-") || displayKey(polite.Event{Key: shown}) != shown {
			t.Errorf("a custom key's label is %q, want polite's fingerprint %q, as its events show it", displayKey(polite.Event{Key: shown}), shown)
		}
		want := map[string]int64{
			"polite.key=" + shown + ",polite.quota.policy=default,polite.quota.source=server,polite.quota.unit=requests,server.address=api.test,server.port=80": 4,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("quota.remaining = %v, want %v", got, want)
		}
		if k := displayKey(polite.Event{Key: secret}); !strings.HasPrefix(k, "sha256:") || len(k) != len("sha256:")+16 {
			t.Errorf("displayKey(secret) = %q, want sha256: and 16 hex digits", k)
		}
	})
}

// The gauge keeps at most MaxKeys keys: the keys seen least recently go
// first. With a negative MaxKeys it reports nothing.
func TestMetricsMaxKeys(t *testing.T) {
	for _, tt := range []struct {
		name    string
		maxKeys int
		want    []string // polite.key of the gauge's series
	}{
		{"cap 2 of 3", 2, []string{"http://b.test", "http://c.test"}},
		{"default", 0, []string{"http://a.test", "http://b.test", "http://c.test"}},
		{"off", -1, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reader := sdkmetric.NewManualReader()
				m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), MaxKeys: tt.maxKeys})
				if err != nil {
					t.Fatal(err)
				}
				cfg := ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 5, Window: time.Minute}}}
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: hosts{
					"a.test": ratelimittest.NewHandler(cfg),
					"b.test": ratelimittest.NewHandler(cfg),
					"c.test": ratelimittest.NewHandler(cfg),
				}}}
				m.Instrument(tr)
				client := &http.Client{Transport: tr}
				for _, u := range []string{"http://a.test/", "http://b.test/", "http://c.test/"} {
					time.Sleep(time.Second) // a key seen later is seen more recently
					resp, err := client.Get(u)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				keys := gaugeKeys(t, reader)
				slices.Sort(keys)
				if !slices.Equal(keys, tt.want) {
					t.Errorf("gauge keys = %v, want %v", keys, tt.want)
				}

				// After Close, the gauge reads no budget.
				if err := m.Close(); err != nil {
					t.Fatal(err)
				}
				if got := ints(t, collect(t, reader)["polite.client.quota.remaining"]); len(got) != 0 {
					t.Errorf("after Close, quota.remaining = %v, want none", got)
				}
			})
		})
	}
}

// Each kind of event records what the package documentation's table says;
// a kind the table does not know is still counted in polite.client.events.
func TestMetricsRules(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "https://api.test:8443/v1", nil)
	const srv = "http.request.method=POST,server.address=api.test,server.port=8443"
	tests := []struct {
		name string
		e    polite.Event
		want map[string]map[string]int64 // instrument -> attributes -> value
	}{
		{"retry", polite.Event{Kind: polite.EventRetry, Request: req, Status: 503, Reason: polite.ReasonBackoff, Wait: time.Second}, map[string]map[string]int64{
			"polite.client.refusals": {sorted(srv + ",http.response.status_code=503,polite.reason=backoff"): 1},
			"polite.client.retries":  {sorted(srv + ",http.response.status_code=503,polite.reason=backoff"): 1},
		}},
		{"give-up", polite.Event{Kind: polite.EventGiveUp, Request: req, Status: 429, Reason: polite.ReasonRetryBudget}, map[string]map[string]int64{
			"polite.client.refusals": {sorted(srv + ",http.response.status_code=429,polite.reason=retry-budget"): 1},
			"polite.client.give_ups": {sorted(srv + ",http.response.status_code=429,polite.reason=retry-budget"): 1},
		}},
		{"give-up without a response", polite.Event{Kind: polite.EventGiveUp, Request: req}, map[string]map[string]int64{
			"polite.client.give_ups": {srv: 1},
		}},
		{"stop", polite.Event{Kind: polite.EventStop, Request: req, Status: 429, Reason: polite.ReasonStopped}, map[string]map[string]int64{
			"polite.client.refusals": {sorted(srv + ",http.response.status_code=429,polite.reason=stopped"): 1},
			"polite.client.stops":    {sorted(srv + ",http.response.status_code=429,polite.reason=stopped"): 1},
		}},
		{"wait-error", polite.Event{Kind: kindLocalRefusal, Request: req, Reason: polite.ReasonQuota, Wait: time.Hour}, map[string]map[string]int64{
			"polite.client.local_refusals": {sorted(srv + ",polite.reason=quota"): 1},
		}},
		{"observe", polite.Event{Kind: polite.EventObserve, Request: req, Status: 200, Quotas: 2}, nil},
		{"unknown kind", polite.Event{Kind: "future", Request: req}, nil},
		{"no request", polite.Event{Kind: polite.EventRetry, Status: 429, Reason: polite.ReasonRetryAfter}, map[string]map[string]int64{
			"polite.client.refusals": {"http.response.status_code=429,polite.reason=retry-after": 1},
			"polite.client.retries":  {"http.response.status_code=429,polite.reason=retry-after": 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
			if err != nil {
				t.Fatal(err)
			}
			m.OnEvent(tt.e)
			got := collect(t, reader)
			for _, name := range []string{"polite.client.requests", "polite.client.refusals", "polite.client.retries", "polite.client.give_ups", "polite.client.stops", "polite.client.local_refusals"} {
				if g := ints(t, got[name]); len(g) != 0 || len(tt.want[name]) != 0 {
					if !reflect.DeepEqual(g, tt.want[name]) {
						t.Errorf("%s = %v, want %v", name, g, tt.want[name])
					}
				}
			}
			events := ints(t, got["polite.client.events"])
			if len(events) != 1 {
				t.Errorf("polite.client.events = %v, want one point", events)
			}
			for k, v := range events {
				if !strings.Contains(k, "polite.event.kind="+string(tt.e.Kind)) || v != 1 {
					t.Errorf("polite.client.events = %v, want 1 of kind %s", events, tt.e.Kind)
				}
			}
		})
	}
}

func TestHostPortMethod(t *testing.T) {
	tests := []struct {
		scheme, authority string
		host              string
		port              int
	}{
		{"http", "a.test", "a.test", 80},
		{"https", "a.test", "a.test", 443},
		{"HTTPS", "a.test:8443", "a.test", 8443},
		{"http", "[::1]:8080", "::1", 8080},
		{"http", "[::1]", "::1", 80},
		{"ftp", "a.test", "a.test", 0},
		{"http", "a.test:99999", "a.test", 80},
	}
	for _, tt := range tests {
		if host, port := hostPort(tt.scheme, tt.authority); host != tt.host || port != tt.port {
			t.Errorf("hostPort(%q, %q) = %q, %d, want %q, %d", tt.scheme, tt.authority, host, port, tt.host, tt.port)
		}
	}
	for in, want := range map[string]string{"": "GET", "GET": "GET", "PATCH": "PATCH", "QUERY": "QUERY", "get": "_OTHER", "BREW": "_OTHER"} {
		if got := method(in); got != want {
			t.Errorf("method(%q) = %q, want %q", in, got, want)
		}
	}
	// Config.KnownMethods replaces the list whole, as OpenTelemetry's
	// conventions ask of an override; there was none.
	known, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(), KnownMethods: []string{"GET", "PROPFIND"}})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{"": "GET", "GET": "GET", "PROPFIND": "PROPFIND", "POST": "_OTHER", "get": "_OTHER"} {
		if got := known.method(in); got != want {
			t.Errorf("with KnownMethods GET and PROPFIND, method(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tt := range []struct {
		key, scheme, host string
		want              bool
	}{
		{"http://a.test", "http", "a.test", true},
		{"http://a.test", "http", "A.test:80", true},
		{"https://a.test.", "https", "a.test:443", true},
		{"http://a.test", "https", "a.test", false},
		{"Bearer x", "http", "a.test", false},
		{"", "http", "", false},
	} {
		if got := sameOrigin(tt.key, tt.scheme, tt.host); got != tt.want {
			t.Errorf("sameOrigin(%q, %q, %q) = %v, want %v", tt.key, tt.scheme, tt.host, got, tt.want)
		}
	}
}

type closeIdler struct {
	http.RoundTripper
	closed int
}

func (c *closeIdler) CloseIdleConnections() { c.closed++ }

// Instrument wraps Base without hiding CloseIdleConnections.
func TestInstrumentForwardsCloseIdleConnections(t *testing.T) {
	m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider()})
	if err != nil {
		t.Fatal(err)
	}
	base := &closeIdler{}
	tr := &polite.Transport{Base: base}
	m.Instrument(tr)
	tr.CloseIdleConnections()
	if base.closed != 1 {
		t.Errorf("CloseIdleConnections reached Base %d times, want 1", base.closed)
	}
}

// Recording an event allocates nothing once its attributes were seen.
func BenchmarkOnEvent(b *testing.B) {
	m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))})
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "https://api.test/v1", nil)
	e := polite.Event{Kind: polite.EventRetry, Request: req, Status: 429, Reason: polite.ReasonRetryAfter, Wait: time.Second}
	b.ReportAllocs()
	for b.Loop() {
		m.OnEvent(e)
	}
}

// A 502 retried with RetryTransient is not a refusal (a 429 or 503), yet
// polite.client.refusals counts it.
func TestTransientIsNoRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n++; n == 1 {
				w.WriteHeader(http.StatusBadGateway)
			}
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, RetryTransient: true}
		m.Instrument(tr)
		resp, err := (&http.Client{Transport: tr}).Get("http://a.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		got := collect(t, reader)
		if r := ints(t, got["polite.client.refusals"]); len(r) != 0 {
			t.Errorf("polite.client.refusals = %v, want none: a 502 is not a refusal (429 or 503)", r)
		}
	})
}

// A 403 that polite reads as a refusal (Retry-After, as GitHub refuses)
// counts in polite.client.refusals as a 429 does; a plain 403 is an answer
// and counts in none. Before, the 403 refusal counted only as a retry.
func TestForbiddenRefusalCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch n++; {
			case r.URL.Path == "/plain":
				w.WriteHeader(http.StatusForbidden)
			case n == 1:
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusForbidden)
			}
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
		m.Instrument(tr)
		c := &http.Client{Transport: tr}
		for _, path := range []string{"/", "/plain"} {
			resp, err := c.Get("http://a.test" + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		got := collect(t, reader)
		if r := ints(t, got["polite.client.refusals"]); len(r) != 1 || r["http.request.method=GET,http.response.status_code=403,polite.reason=retry-after,server.address=a.test,server.port=80"] != 1 {
			t.Errorf("polite.client.refusals = %v, want the one 403 with Retry-After", r)
		}
	})
}

// The gauge's polite.key is documented as the origin for polite's default
// key; for an internationalised host it comes out as a "sha256:" hash.
func TestGaugeKeyOfIDNOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		if err != nil {
			t.Fatal(err)
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("RateLimit-Policy", `"api";q=10;w=60`)
			w.Header().Set("RateLimit", `"api";r=9;t=60`)
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
		m.Instrument(tr)
		resp, err := (&http.Client{Transport: tr}).Get("http://bücher.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		g := ints(t, collect(t, reader)["polite.client.quota.remaining"])
		if len(g) == 0 {
			t.Fatal("no gauge")
		}
		for attrs := range g {
			if !strings.Contains(attrs, "polite.key=http://xn--bcher-kva.test") {
				t.Errorf("gauge series %s, want polite.key=http://xn--bcher-kva.test (the key polite's events show)", attrs)
			}
		}
	})
}

// TestGaugeEveryStatedQuota checks that the gauge reports every quota a key
// states: 8 of requests and 2 of tokens gave 9 series, one dropped.
func TestGaugeEveryStatedQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		if err != nil {
			t.Fatal(err)
		}
		var pol, lim []string
		for i := range 8 {
			pol = append(pol, fmt.Sprintf(`"p%d";q=1000;w=60`, i))
			lim = append(lim, fmt.Sprintf(`"p%d";r=999;t=60`, i))
		}
		reset := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("RateLimit-Policy", strings.Join(pol, ", "))
			w.Header().Set("RateLimit", strings.Join(lim, ", "))
			for _, u := range []string{"input-tokens", "output-tokens"} {
				w.Header().Set("anthropic-ratelimit-"+u+"-limit", "30000")
				w.Header().Set("anthropic-ratelimit-"+u+"-remaining", "29000")
				w.Header().Set("anthropic-ratelimit-"+u+"-reset", reset)
			}
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
		m.Instrument(tr)
		resp, err := (&http.Client{Transport: tr}).Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		st, _ := tr.Inspect("http://api.test", time.Now())
		got := ints(t, collect(t, reader)["polite.client.quota.remaining"])
		live := 0
		for _, p := range st.Policies {
			if p.Remaining >= 0 {
				live++
			}
		}
		if len(got) != live {
			t.Errorf("Inspect shows %d stated quotas with a live count; the gauge reports %d series ", live, len(got))
		}
	})
}

// One Metrics may serve several Transports (Metrics doc). Two Transports
// with budgets of their own on the same origin hold two quotas under
// series of the same attributes: the gauge reports the least left, at
// every collection. It reported the one observed last, in sync.Map's
// order: 4 or 9 from one collection to the next.
func TestGaugeBudgetsOfOneOrigin(t *testing.T) {
	for _, swap := range []bool{false, true} {
		t.Run(fmt.Sprint(swap), func(t *testing.T) { gaugeBudgetsOfOneOrigin(t, swap) })
	}
}

func gaugeBudgetsOfOneOrigin(t *testing.T, swap bool) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		if err != nil {
			t.Fatal(err)
		}
		mk := func(q int64) *polite.Transport {
			tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{
				Policies: []ratelimittest.Policy{{Quota: q, Window: time.Minute}},
			})}}
			m.Instrument(tr)
			return tr
		}
		// After one request: 4 left under one, 9 under the other, made
		// first or second.
		a, b := mk(5), mk(10)
		if swap {
			b, a = mk(10), mk(5)
		}
		for _, tr := range []*polite.Transport{a, b} {
			resp, err := (&http.Client{Transport: tr}).Get("http://api.test/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		for _, tr := range []*polite.Transport{a, b} {
			st, _ := tr.Inspect("http://api.test", time.Now())
			t.Logf("Inspect: key %s remaining %d", st.Key, st.Policies[0].Remaining)
		}
		for range 20 {
			got := ints(t, collect(t, reader)["polite.client.quota.remaining"])
			if len(got) != 1 {
				t.Fatalf("quota.remaining reports %v; want one series", got)
			}
			for _, v := range got {
				if v != 4 {
					t.Fatalf("quota.remaining reports %v; want the least left of the two budgets' quotas (4 and 9)", got)
				}
			}
		}
	})
}

// The counters name at most MaxHosts hosts, the first seen; events of the
// others count under server.address "_OTHER": a crawler sent to ever more
// hosts adds no series. Each host added series for the life of the process
// before (200 after 200 hosts).
func TestMetricsMaxHosts(t *testing.T) {
	const maxHosts, hosts = 10, 200
	reader := sdkmetric.NewManualReader()
	m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), MaxHosts: maxHosts})
	if err != nil {
		t.Fatal(err)
	}
	tr := &polite.Transport{}
	m.Instrument(tr)
	for i := range hosts {
		host := fmt.Sprintf("h%d.attacker.test", i)
		req, _ := http.NewRequest(http.MethodGet, "https://"+host+"/", nil)
		tr.OnEvent(polite.Event{Kind: polite.EventWait, Time: time.Now(), Key: "https://" + host, Request: req, Attempt: 1, Wait: time.Second, Reason: polite.ReasonPace})
	}
	named, other := 0, int64(0)
	for set, n := range ints(t, collect(t, reader)["polite.client.events"]) {
		switch {
		case strings.Contains(set, "server.address="+otherHost):
			other += n
		case strings.Contains(set, "server.address="):
			named++
		}
	}
	if named != maxHosts || other != hosts-maxHosts {
		t.Errorf("%d hosts named and %d events under %s, want %d and %d", named, other, otherHost, maxHosts, hosts-maxHosts)
	}
}

// The host of an event is cut from its request's URL. Kept as it was, in
// the Metrics' hosts and its cached attribute sets, it kept the whole URL,
// of a megabyte maybe, for the life of the Metrics.
func TestHostsKeepNoURL(t *testing.T) {
	m, _ := manualMetrics(t)
	keptPerURL(t, "host", func(i int, req *http.Request) {
		m.OnEvent(polite.Event{Kind: polite.EventRetry, Request: req, Status: 429, Reason: polite.ReasonRetryAfter, Wait: time.Second})
	})
	runtime.KeepAlive(m)
}

// keptPerURL records an event, through record, for each of 100 requests to
// hosts of their own, with URLs of 256 KiB, and fails t if what stays on
// the heap comes to more than 16 KiB a request: a URL kept.
func keptPerURL(t *testing.T, what string, record func(i int, req *http.Request)) {
	t.Helper()
	const hosts = 100
	pad := strings.Repeat("a", 256<<10)
	one := func(i int) {
		// A fresh string per URL, as a crawler reads links from bodies.
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://h%d.test/%s", i, pad), nil)
		if err != nil {
			t.Fatal(err)
		}
		record(i, req)
	}
	one(0)
	before := heapAlloc()
	for i := 1; i <= hosts; i++ {
		one(i)
	}
	after := heapAlloc()
	per := (int64(after) - int64(before)) / hosts
	t.Logf("%d bytes kept per %s for URLs of 256 KiB", per, what)
	if per > 16<<10 {
		t.Errorf("%d bytes kept per %s, want at most 16 KiB: the URLs of 256 KiB are kept", per, what)
	}
}

func heapAlloc() uint64 {
	var s runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&s)
	return s.HeapAlloc
}

// gaugeKeys returns the polite.key of each series of the quota gauge.
func gaugeKeys(t *testing.T, reader *sdkmetric.ManualReader) []string {
	var keys []string
	for set := range ints(t, collect(t, reader)["polite.client.quota.remaining"]) {
		for _, kv := range strings.Split(set, ",") {
			if k, ok := strings.CutPrefix(kv, "polite.key="); ok {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// A request a server read has its Method cut from its request line, which
// holds the whole URI, query and all: a polite Transport behind a reverse
// proxy sends such requests. The method kept as it was, in the cached
// attribute sets and the SDK's series, kept the whole line, with the
// default list of methods and with Config.KnownMethods.
func TestMethodKeepsNoRequestLine(t *testing.T) {
	for _, known := range [][]string{nil, {"GET"}} {
		reader := sdkmetric.NewManualReader()
		m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), KnownMethods: known})
		if err != nil {
			t.Fatal(err)
		}
		keptPerURL(t, "method", func(i int, req *http.Request) {
			line := "GET " + req.URL.Path + " HTTP/1.1" // a fresh string of 256 KiB
			req.Method, _, _ = strings.Cut(line, " ")
			m.OnEvent(polite.Event{Kind: polite.EventRetry, Request: req, Status: 429, Reason: polite.ReasonRetryAfter, Wait: time.Second})
		})
		runtime.KeepAlive(m)
	}
}
