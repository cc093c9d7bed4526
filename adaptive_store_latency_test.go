package polite

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// slowStore is a MemoryStore reached as a Store, each Update taking delay().
type slowStore struct {
	*MemoryStore
	delay func() time.Duration
}

func (s slowStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	time.Sleep(s.delay())
	return s.MemoryStore.Update(ctx, key, fn)
}

// Restraint.Adaptive's latency is "the server's time to answer" (DESIGN.md
// §9), "counted from the send". An origin that never queues (50ms whatever
// its load) behind a Budget whose Store slows down (a shared Redis under
// load: 1ms, then 250ms an Update after two minutes) keeps its limit: the
// Store's time is not the origin's.
func TestAdaptiveStoreLatencyIsNotOrigins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var inflight, peak atomic.Int64
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			in := inflight.Add(1)
			defer inflight.Add(-1)
			for p := peak.Load(); in > p && !peak.CompareAndSwap(p, in); p = peak.Load() {
			}
			time.Sleep(50 * time.Millisecond) // never queues
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		store := slowStore{&MemoryStore{}, func() time.Duration {
			if time.Since(start) < 2*time.Minute {
				return time.Millisecond
			}
			return 250 * time.Millisecond
		}}
		tr := &Transport{Base: base, Budget: &Budget{Store: store}, Restraint: &Restraint{MaxConcurrency: 16, Adaptive: true}}
		ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://app.example/", nil)
					resp, err := tr.RoundTrip(req)
					if err == nil {
						resp.Body.Close()
					}
				}
			})
		}
		time.Sleep(2*time.Minute + 10*time.Second)
		k := originKey("http", "app.example").m
		sh := tr.ceil.shard(k)
		var sum, n int64
		for range 1000 { // minutes 2:10-3:50: the adaptive limit, every 100ms
			time.Sleep(100 * time.Millisecond)
			sh.mu.Lock()
			if e := sh.m[k]; e != nil && e.grad != nil {
				sum += int64(e.grad.limit())
				n++
			}
			sh.mu.Unlock()
		}
		sh.mu.Lock()
		if e := sh.m[k]; e != nil && e.grad != nil {
			t.Logf("baseline %v, smoothed latency %v, limit %d, peak in flight %d", e.grad.base, e.grad.srtt, e.grad.limit(), peak.Load())
		}
		sh.mu.Unlock()
		cancel()
		wg.Wait()
		if mean := float64(sum) / float64(max(n, 1)); mean < 8 {
			t.Errorf("minutes 2-4: adaptive limit %.1f on average (MaxConcurrency 16) for an origin answering in 50ms whatever its load, once the Store took 250ms an Update: the Store's round trip, between the local reservation and the send, read as the origin queueing", mean)
		}
	})
}
