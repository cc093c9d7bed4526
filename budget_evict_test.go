package polite

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Budget.MaxConcurrency holds whatever the server says; the in-memory
// store's eviction past MaxKeys dropped a state whose lease was out, and a
// second request to the key went while the first was still in flight.
func TestBudgetMaxConcurrencySurvivesEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var mu sync.Mutex
		inflight, peak := map[string]int{}, map[string]int{}
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			inflight[r.URL.Host]++
			peak[r.URL.Host] = max(peak[r.URL.Host], inflight[r.URL.Host])
			mu.Unlock()
			defer func() { mu.Lock(); inflight[r.URL.Host]--; mu.Unlock() }()
			if r.URL.Host == "a.test" {
				select {
				case <-release:
				case <-r.Context().Done():
					return nil, r.Context().Err()
				}
			}
			return okResponse(r)
		})
		tr := &Transport{Base: base, Budget: &Budget{MaxKeys: 2, MaxConcurrency: 1}}
		get := func(ctx context.Context, host string) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/", nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		var wg sync.WaitGroup
		wg.Go(func() { get(t.Context(), "a.test") }) // in flight until release
		synctest.Wait()
		for _, h := range []string{"b.test", "c.test", "d.test"} {
			if err := get(t.Context(), h); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		wg.Go(func() { get(ctx, "a.test") }) // must wait for the first: MaxConcurrency 1
		synctest.Wait()
		mu.Lock()
		p := peak["a.test"]
		mu.Unlock()
		close(release)
		wg.Wait()
		if p > 1 {
			t.Errorf("Budget.MaxConcurrency 1: %d requests to a.test in flight at once after other keys evicted its state (MaxKeys 2)", p)
		}
	})
}

// MaxKeys bounds memory with a Budget.MaxRate too: a key whose next start
// MaxRate had not yet allowed was kept past MaxKeys, and a crawler with a
// MaxRate of one an hour kept every origin it met (2000 of 2000).
func TestMaxKeysBoundsWithMaxRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{MaxKeys: 16, MaxRate: 1.0 / 3600}
		tr := &Transport{Base: roundTripper(okResponse), Budget: b}
		for i := range 2000 {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("http://o%d.test/", i), nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if n := b.mem.count.Load(); n > 32 {
			t.Errorf("%d keys kept with MaxKeys 16 after 2000 origins fetched once each, none in flight nor waited on", n)
		}
	})
}
