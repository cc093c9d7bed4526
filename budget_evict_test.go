package polite

import (
	"context"
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

// Budget.MaxRate holds whatever the server says; evicted past MaxKeys
// after three other origins, a key's second request started at once, not
// 10 s after its first.
func TestBudgetMaxRateSurvivesEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var sent []time.Time
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == "a.test" {
				mu.Lock()
				sent = append(sent, time.Now())
				mu.Unlock()
			}
			return okResponse(r)
		})
		tr := &Transport{Base: base, Budget: &Budget{MaxKeys: 2, MaxRate: 0.1}}
		get := func(host string) error {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		for _, h := range []string{"a.test", "b.test", "c.test", "d.test", "a.test"} {
			if err := get(h); err != nil {
				t.Fatal(err)
			}
		}
		if len(sent) != 2 {
			t.Fatalf("sent %d to a.test", len(sent))
		}
		if gap := sent[1].Sub(sent[0]); gap < 10*time.Second {
			t.Errorf("Budget.MaxRate 0.1/s: two requests to a.test started %v apart, want 10s (its state evicted past MaxKeys 2)", gap)
		}
	})
}
