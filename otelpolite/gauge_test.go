package otelpolite

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
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
// left among them; server.address, the request's spelling, made two.
func TestGaugeSameKeyTwoSpellings(t *testing.T) {
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
		for i, u := range []string{"http://api.test/", "http://API.test./"} {
			tr := []*polite.Transport{a, b}[i]
			resp, err := (&http.Client{Transport: tr}).Get(u)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			st, _ := tr.Inspect(u, time.Now())
			keys = append(keys, st.Key)
		}
		t.Logf("budget keys: %v", keys)
		got := ints(t, collect(t, reader)["polite.client.quota.remaining"])
		least := int64(-1)
		for _, v := range got {
			least = v
		}
		if len(got) != 1 || least != 4 {
			t.Errorf("quota.remaining = %v; want one series for key %s, of 4 (the least left)", got, keys[0])
		}
	})
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
