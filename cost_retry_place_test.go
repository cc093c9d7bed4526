package polite_test

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A large request the server counts more than it declares, among small
// ones that keep a token quota busy: refused, its retry waited for the
// tokens it lacked while the small requests, asked after it, took them as
// they came back, and it was refused again at every attempt until it
// failed. Its retry now holds its place: the requests that cost and first
// asked after it wait until it goes.
func TestRetryKeepsItsPlaceForTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit, perSec = 1000, 20.0 // 1,200 tokens a minute
		var (
			mu     sync.Mutex
			tokens = float64(limit)
			last   = time.Now()
		)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			counted, _ := strconv.ParseFloat(r.Header.Get("X-Counted"), 64)
			mu.Lock()
			now := time.Now()
			tokens = min(limit, tokens+now.Sub(last).Seconds()*perSec)
			last = now
			ok := tokens >= counted
			if ok {
				tokens -= counted
			}
			rem := int(tokens)
			mu.Unlock()
			hd := w.Header()
			hd.Set("x-ratelimit-limit-tokens", strconv.Itoa(limit))
			hd.Set("x-ratelimit-remaining-tokens", strconv.Itoa(rem))
			hd.Set("x-ratelimit-reset-tokens", (time.Duration(float64(limit-rem) / perSec * 1e9)).Round(time.Millisecond).String())
			if !ok {
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 2}}
		send := func(declared, counted int64) int {
			ctx := polite.WithCost(t.Context(), polite.Cost{Tokens: declared})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/chat/completions", nil)
			req.Header.Set("X-Counted", strconv.FormatInt(counted, 10))
			code, _ := statusOf(c, req)
			return code
		}
		var stop atomic.Bool
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for !stop.Load() {
					send(40, 40)
					time.Sleep(100 * time.Millisecond)
				}
			})
		}
		time.Sleep(10 * time.Second)
		code := send(400, 700)
		stop.Store(true)
		wg.Wait()
		if code != http.StatusOK {
			t.Errorf("the large request: %d; want 200", code)
		}
	})
}
