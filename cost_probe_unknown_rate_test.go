package polite_test

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A tokens quota stated without its limit (only OpenAI's remaining and
// reset of tokens) refills at a rate the key cannot tell, and is whole
// again at its reset, how whole unknown. A request costing more than the
// remaining stated waited, past that reset, for any request in flight to
// end: one of 5 minutes, granted before the reset, or after it, held it 5
// minutes and then a second reset. It goes at the reset as the quota's
// probe when the request in flight was granted before it, and after the
// key's probe wait (3 s here) when that one is the probe and has not
// answered.
func TestCostProbeAtResetOfUnknownRate(t *testing.T) {
	for _, c := range []struct {
		name string
		slow time.Duration // when the long request starts, after the answer
		ask  time.Duration // when the request of 500 tokens asks
		most time.Duration // the longest it may wait
	}{
		{name: "long request from before the reset", slow: time.Second, ask: 5 * time.Second, most: 5 * time.Second},
		{name: "long request after it", slow: time.Minute, ask: time.Minute, most: 3 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("X-Slow") != "" {
						time.Sleep(5 * time.Minute)
					}
					w.Header().Set("X-Ratelimit-Remaining-Tokens", "100")
					w.Header().Set("X-Ratelimit-Reset-Tokens", "10s")
				})
				cl := declaredCostClient(h)
				start := time.Now()
				if code, err := sendDeclared(cl, 50); code != http.StatusOK {
					t.Fatalf("first request: %d %v", code, err)
				}
				time.Sleep(c.slow)
				done := make(chan struct{})
				defer func() { <-done }() // the long request ends, within the bubble
				go func() {
					defer close(done)
					req, _ := http.NewRequest(http.MethodPost, "http://llm.example/v1/chat/completions", nil)
					req.Header.Set("X-Cost", "10")
					req.Header.Set("X-Slow", "1")
					statusOf(cl, req)
				}()
				synctest.Wait()
				time.Sleep(c.ask - c.slow)
				asked := time.Now()
				code, err := sendDeclared(cl, 500)
				if waited := time.Since(asked); code != http.StatusOK || waited > c.most {
					t.Errorf("500 tokens asked %v after the answer: %d %v after %v; want 200 within %v",
						asked.Sub(start), code, err, waited, c.most)
				}
			})
		})
	}
}

// The probe goes alone: against a bucket of 1000 tokens refilled at 100
// a second, stating what is left and the time until it is whole but not
// its limit, 8 workers each sending 10 requests of 400 tokens are
// refused none. Every request held going at the reset, taken for whole,
// 75 were refused.
func TestCostProbeAloneAtReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		level, last := 1000.0, time.Now()
		refused := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(500 * time.Millisecond) // a model generating
			mu.Lock()
			defer mu.Unlock()
			now := time.Now()
			level = min(1000, level+100*now.Sub(last).Seconds())
			last = now
			n, _ := strconv.ParseFloat(r.Header.Get("X-Cost"), 64)
			ok := level >= n
			if ok {
				level -= n
			}
			w.Header().Set("X-Ratelimit-Remaining-Tokens", strconv.Itoa(int(level)))
			w.Header().Set("X-Ratelimit-Reset-Tokens", fmt.Sprintf("%.3fs", (1000-level)/100))
			if !ok {
				refused++
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		c := declaredCostClient(h)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 10 {
					if code, err := sendDeclared(c, 400); code != http.StatusOK {
						t.Errorf("a task failed: %d %v", code, err)
					}
				}
			})
		}
		wg.Wait()
		if refused > 0 {
			t.Errorf("%d requests refused", refused)
		}
	})
}
