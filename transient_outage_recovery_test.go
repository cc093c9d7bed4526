package polite_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A 10-minute outage (dials refused), then the origin is back: found
// within a pause (75 s at most), and no burst once it is.
func TestTransientOutageRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		back := start.Add(10 * time.Minute)
		var firstOK atomic.Int64
		var mu sync.Mutex
		perSec := map[int64]int{}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			perSec[int64(time.Since(start)/time.Second)]++
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			if time.Now().Before(back) {
				return downAnswer(r, 0)
			}
			firstOK.CompareAndSwap(0, int64(time.Since(back)))
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, RetryTransient: true}
		stop := back.Add(2 * time.Minute)
		var wg sync.WaitGroup
		var hung atomic.Int64
		for range 50 {
			wg.Go(func() {
				for time.Now().Before(stop) {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
					t0 := time.Now()
					resp, err := tr.RoundTrip(req)
					if time.Since(t0) > 31*time.Second {
						hung.Add(1)
					}
					if err == nil {
						resp.Body.Close()
					}
					cancel()
					time.Sleep(time.Second)
				}
			})
		}
		wg.Wait()
		busiest := 0
		for s, n := range perSec {
			if s >= 600 {
				busiest = max(busiest, n)
			}
		}
		t.Logf("found back after %v; %d calls past their deadline; busiest second after recovery %d", time.Duration(firstOK.Load()), hung.Load(), busiest)
		if d := time.Duration(firstOK.Load()); d > 80*time.Second {
			t.Errorf("found back after %v", d)
		}
	})
}
