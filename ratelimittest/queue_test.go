package ratelimittest_test

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// queueLoad sends n GETs at once to h and returns their status codes.
func queueLoad(t *testing.T, ctx context.Context, h http.Handler, n int) map[int]int {
	t.Helper()
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	tr := &ratelimittest.Transport{Handler: h}
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://q.example/", nil)
			resp, err := tr.RoundTrip(req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				codes[0]++
				return
			}
			resp.Body.Close()
			codes[resp.StatusCode]++
		})
	}
	wg.Wait()
	return codes
}

func TestQueueHandlerLatencyGrowsWithLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewQueueHandler(ratelimittest.QueueConfig{}) // 8 workers, 50ms
		if got := h.Capacity(); got != 160 {
			t.Errorf("Capacity() = %v, want 160", got)
		}
		start := time.Now()
		codes := queueLoad(t, t.Context(), h, 24)
		if d := time.Since(start); d != 150*time.Millisecond {
			t.Errorf("24 requests took %v, want 3 rounds of 50ms", d)
		}
		st := h.Stats()
		if codes[200] != 24 || st.Served != 24 || st.Refused != 0 || st.PeakBusy != 8 || st.PeakQueue != 16 {
			t.Errorf("codes %v, stats %+v; want 24 served, 8 busy, 16 queued at most", codes, st)
		}
		if got := st.Median(); got != 100*time.Millisecond {
			t.Errorf("median latency %v, want 100ms (8 at 50, 8 at 100, 8 at 150)", got)
		}
		if got := st.Throughput(); got != 160 {
			t.Errorf("throughput %v, want 160", got)
		}
	})
}

func TestQueueHandlerRefusesWhenFull(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cfg     ratelimittest.QueueConfig
		served  int
		refused int
		status  int
	}{
		{"queue of 4", ratelimittest.QueueConfig{Workers: 2, QueueLen: 4}, 6, 4, 503},
		{"no queue", ratelimittest.QueueConfig{Workers: 2, QueueLen: -1, RefuseStatus: 429}, 2, 8, 429},
		{"unbounded", ratelimittest.QueueConfig{Workers: 2}, 10, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewQueueHandler(tt.cfg)
				codes := queueLoad(t, t.Context(), h, 10)
				st := h.Stats()
				if st.Served != tt.served || st.Refused != tt.refused || codes[200] != tt.served || (tt.refused > 0 && codes[tt.status] != tt.refused) {
					t.Errorf("codes %v, stats %+v; want %d served, %d refused with %d", codes, st, tt.served, tt.refused, tt.status)
				}
			})
		})
	}
}

func TestQueueHandlerCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewQueueHandler(ratelimittest.QueueConfig{Workers: 1, ServiceTime: time.Second})
		ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
		defer cancel()
		codes := queueLoad(t, ctx, h, 3) // one served, one canceled while served, one while queued
		st := h.Stats()
		if codes[200] != 1 || codes[0] != 2 || st.Served != 1 || st.Canceled != 2 {
			t.Errorf("codes %v, stats %+v; want 1 served, 2 canceled", codes, st)
		}
		// The worker is free again.
		start := time.Now()
		if codes := queueLoad(t, t.Context(), h, 1); codes[200] != 1 || time.Since(start) != time.Second {
			t.Errorf("after cancellations: %v in %v, want 200 in 1s", codes, time.Since(start))
		}
	})
}

func TestQueueStatsEmpty(t *testing.T) {
	var st ratelimittest.QueueStats
	if st.Median() != 0 || st.Throughput() != 0 {
		t.Errorf("empty stats: median %v, throughput %v; want 0, 0", st.Median(), st.Throughput())
	}
}

// A Next that aborts its response (http.ErrAbortHandler, the way net/http
// documents to abort a handler) must not take its worker with it: the
// QueueHandler still has Workers workers, and the next request is served
// in ServiceTime. The worker was never released, and every later request
// queued until its context ended.
func TestQueueHandlerNextPanicFreesWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		h := ratelimittest.NewQueueHandler(ratelimittest.QueueConfig{
			Workers:     1,
			ServiceTime: time.Second,
			Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 {
					panic(http.ErrAbortHandler)
				}
				io.WriteString(w, "served\n")
			}),
		})
		c := &http.Client{Transport: &ratelimittest.Transport{Handler: h}}
		if resp, err := c.Get("http://example.test/"); err == nil {
			resp.Body.Close()
			t.Fatalf("first request: got %d, want the aborted response's error", resp.StatusCode)
		}

		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.test/", nil)
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("second request, with the only worker idle: %v after %v (want 200 after ServiceTime 1s); stats %+v",
				err, time.Since(start), h.Stats())
		}
		resp.Body.Close()
		if got := time.Since(start); got != time.Second {
			t.Errorf("second request took %v, want ServiceTime 1s", got)
		}
	})
}

// NewQueueHandler panics on a RefuseStatus that is no error status, as
// NewHandler does: 42 made net/http panic at the first refusal, and 200
// answered a full queue as a success.
func TestNewQueueHandlerPanicsOnRefuseStatus(t *testing.T) {
	for _, code := range []int{42, -503, 1000, http.StatusOK, http.StatusFound} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewQueueHandler(RefuseStatus %d) did not panic", code)
				}
			}()
			ratelimittest.NewQueueHandler(ratelimittest.QueueConfig{RefuseStatus: code})
		}()
	}
	for _, code := range []int{0, http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		ratelimittest.NewQueueHandler(ratelimittest.QueueConfig{RefuseStatus: code})
	}
}
