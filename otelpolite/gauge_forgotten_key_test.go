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
)

// updateCountingStore is a MemoryStore that counts the calls of Update, as
// a Store reached over the network (redisstore) pays a round trip for each.
type updateCountingStore struct {
	polite.MemoryStore
	updates atomic.Int64
}

func (s *updateCountingStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	s.updates.Add(1)
	return s.MemoryStore.Update(ctx, key, fn)
}

// The gauge reports "the quota left under each budget key recently seen".
// Keys last seen hours ago, which the Budget has forgotten (IdleTTL, 10
// minutes by default) and for which the gauge reports nothing, stayed in
// its set all the same: every collection, forever, asked the Store about
// each of them again, though the last one found none. With the default
// MaxKeys that was up to 1000 round trips to Redis a scrape for a crawl
// that ended long ago, until as many new keys pushed them out.
func TestGaugeForgetsKeysTheBudgetForgot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		m, err := New(Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		if err != nil {
			t.Fatal(err)
		}
		store := &updateCountingStore{}
		cfg := ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 30, Window: time.Minute}}}
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: ratelimittest.NewHandler(cfg)}, Budget: &polite.Budget{Store: store}}
		m.Instrument(tr)
		const keys = 20
		for i := range keys {
			resp, err := (&http.Client{Transport: tr}).Get(fmt.Sprintf("http://h%d.test/", i))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if n := len(ints(t, collect(t, reader)["polite.client.quota.remaining"])); n != keys {
			t.Fatalf("right after the requests, quota.remaining has %d series, want %d", n, keys)
		}

		time.Sleep(3 * time.Hour) // no request since: every key idle past IdleTTL
		if _, ok := tr.Inspect("http://h0.test", time.Now()); ok {
			t.Fatal("the Budget still holds h0.test after 3 idle hours")
		}
		for i := range 3 {
			before := store.updates.Load()
			got := ints(t, collect(t, reader)["polite.client.quota.remaining"])
			calls := store.updates.Load() - before
			if len(got) != 0 {
				t.Fatalf("collection %d reports %v, want nothing", i, got)
			}
			// The first collection may ask, to learn that the keys are
			// gone; the next ones have no reason to.
			if i > 0 && calls != 0 {
				t.Errorf("collection %d, 3 hours after the last event: %d Store calls for keys the Budget forgot, want 0", i, calls)
			}
		}
		runtime.KeepAlive(tr)
	})
}
