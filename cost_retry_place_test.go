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
		b := newTokenBucket(1000, 20, 1000) // 1,200 tokens a minute
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			counted, _ := strconv.ParseFloat(r.Header.Get("X-Counted"), 64)
			b.answer(w, counted, false)
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

// tokenBucket is a server's token quota, refilled continuously and
// stated in OpenAI's fields.
type tokenBucket struct {
	mu     sync.Mutex
	limit  int     // tokens
	perSec float64 // tokens a second
	tokens float64 // left at last
	last   time.Time
}

func newTokenBucket(limit int, perSec, tokens float64) *tokenBucket {
	return &tokenBucket{limit: limit, perSec: perSec, tokens: tokens, last: time.Now()}
}

// refill brings b to now.
func (b *tokenBucket) refill() {
	now := time.Now()
	b.tokens = min(float64(b.limit), b.tokens+now.Sub(b.last).Seconds()*b.perSec)
	b.last = now
}

// answer takes counted tokens, or all b has if drain, and writes the
// fields that state what is left: a 429 when b has not that many.
func (b *tokenBucket) answer(w http.ResponseWriter, counted float64, drain bool) {
	b.mu.Lock()
	b.refill()
	if drain {
		counted = b.tokens
	}
	ok := b.tokens >= counted
	if ok {
		b.tokens -= counted
	}
	rem := int(b.tokens)
	b.mu.Unlock()
	hd := w.Header()
	hd.Set("x-ratelimit-limit-tokens", strconv.Itoa(b.limit))
	hd.Set("x-ratelimit-remaining-tokens", strconv.Itoa(rem))
	hd.Set("x-ratelimit-reset-tokens", (time.Duration(float64(b.limit-rem) / b.perSec * 1e9)).Round(time.Millisecond).String())
	if !ok {
		w.WriteHeader(http.StatusTooManyRequests)
	}
}
