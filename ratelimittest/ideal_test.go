package ratelimittest_test

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

func TestIdeal(t *testing.T) {
	perSecond := func(a ratelimittest.Algorithm, q int64) []ratelimittest.Policy {
		return []ratelimittest.Policy{{Algorithm: a, Quota: q, Window: time.Second}}
	}
	tests := []struct {
		name           string
		cfg            ratelimittest.Config
		tasks, workers int
		want           time.Duration
	}{
		// 10 per window: the 100th request goes in the tenth window, at 9s.
		{"fixed window", ratelimittest.Config{Policies: perSecond(ratelimittest.FixedWindow, 10)}, 100, 16, 9 * time.Second},
		// A burst of 10, then one every 100ms: the 100th at 9s.
		{"token bucket", ratelimittest.Config{Policies: perSecond(ratelimittest.TokenBucket, 10)}, 100, 16, 9 * time.Second},
		{"sliding log", ratelimittest.Config{Policies: perSecond(ratelimittest.SlidingLog, 10)}, 100, 16, 9 * time.Second},
		// One worker: sends at 0 and 0.3s, then when each leaves the log: 1s, 1.3s, 2s; the last ends at 2.3s.
		{"sliding log latency", ratelimittest.Config{Latency: 300 * time.Millisecond, Policies: perSecond(ratelimittest.SlidingLog, 2)}, 5, 1, 2300 * time.Millisecond},
		// Two at 0; at 1.5s prev=2 weighs 1; at 2s prev=1 weighs 1 again.
		{"sliding window counter 4", ratelimittest.Config{Policies: perSecond(ratelimittest.SlidingWindow, 2)}, 4, 8, 2 * time.Second},
		{"sliding window counter 5", ratelimittest.Config{Policies: perSecond(ratelimittest.SlidingWindow, 2)}, 5, 8, 3 * time.Second},
		// Four at a time, a second each: three rounds.
		{"concurrency", ratelimittest.Config{Latency: time.Second, Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.Concurrency, Quota: 4}}}, 10, 16, 3 * time.Second},
		{"concurrency few workers", ratelimittest.Config{Latency: time.Second, Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.Concurrency, Quota: 4}}}, 10, 2, 5 * time.Second},
		// Two at a time every 300ms; the fixed window admits the 9th and 10th at 1.2s.
		{"concurrency and window", ratelimittest.Config{Latency: 300 * time.Millisecond, Policies: []ratelimittest.Policy{
			{Algorithm: ratelimittest.Concurrency, Quota: 2},
			{Quota: 10, Window: time.Second},
		}}, 10, 16, 1500 * time.Millisecond},
		// Tokens outpace four workers busy a second each: 25 rounds.
		{"workers bound", ratelimittest.Config{Latency: time.Second, Policies: perSecond(ratelimittest.TokenBucket, 10)}, 100, 4, 25 * time.Second},
		// Two in the first second, a third at 1s, the fourth when the first leaves the log.
		{"two policies", ratelimittest.Config{Policies: []ratelimittest.Policy{
			{Quota: 2, Window: time.Second},
			{Algorithm: ratelimittest.SlidingLog, Quota: 3, Window: 10 * time.Second},
		}}, 4, 8, 10 * time.Second},
		// 2-byte bodies, 5 per window.
		{"content bytes", ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Second, Unit: "content-bytes"}}}, 12, 4, 2 * time.Second},
		{"no policies", ratelimittest.Config{Latency: time.Second}, 100, 10, 10 * time.Second},
		{"no policies no latency", ratelimittest.Config{}, 100, 10, 0},
		{"no workers means one", ratelimittest.Config{Latency: time.Second}, 3, 0, 3 * time.Second},
		{"no tasks", ratelimittest.Config{Policies: perSecond(ratelimittest.FixedWindow, 1)}, 0, 1, 0},
		{"never", ratelimittest.Config{BodySize: 2, Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Second, Unit: "content-bytes"}}}, 1, 1, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ratelimittest.Ideal(tt.cfg, tt.tasks, tt.workers); got != tt.want {
				t.Errorf("Ideal(%d tasks, %d workers) = %v, want %v", tt.tasks, tt.workers, got, tt.want)
			}
		})
	}
}

// TestIdealReached runs a client that honours Retry-After against a fixed
// window: because the window ends and the responses fall on whole seconds,
// the honest Retry-After lets it match Ideal exactly.
func TestIdealReached(t *testing.T) {
	cfg := ratelimittest.Config{
		Latency:  time.Second,
		Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Second}},
	}
	const tasks, workers = 100, 16
	want := ratelimittest.Ideal(cfg, tasks, workers)
	if want != 10*time.Second {
		t.Fatalf("Ideal = %v, want 10s", want)
	}
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(cfg)
		c := client(h)
		var mu sync.Mutex
		left := tasks
		start := time.Now()
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					mu.Lock()
					if left == 0 {
						mu.Unlock()
						return
					}
					left--
					mu.Unlock()
					for {
						resp, _ := send(t, c, "")
						if resp.StatusCode == http.StatusOK {
							break
						}
						s, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
						time.Sleep(time.Duration(s) * time.Second)
					}
				}
			})
		}
		wg.Wait()
		if got := time.Since(start); got != want {
			t.Errorf("client took %v, Ideal says %v", got, want)
		}
		if s := h.Stats(); s.Admitted != tasks {
			t.Errorf("Admitted = %d, want %d", s.Admitted, tasks)
		}
	})
}
