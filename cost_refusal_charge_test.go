package polite_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A 429 that states no token quota (a gateway's, or Azure OpenAI's, with
// retry-after and no remaining-tokens) refused the request: the server did
// not count its tokens, yet they were charged. An OpenAI-shaped server of
// 6000 tokens a minute (100 a second) has 5900 left when a request of 5000
// tokens is refused once with Retry-After: 1; its retry waited 41 s, not
// the second asked for.
func TestBareRefusalChargesCost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		left := float64(6000)
		last := time.Now()
		var arrivals []time.Time
		refuseNext := false
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cost, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
			mu.Lock()
			defer mu.Unlock()
			left = min(6000, left+100*time.Since(last).Seconds())
			last = time.Now()
			arrivals = append(arrivals, time.Now())
			if refuseNext {
				refuseNext = false
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			if float64(cost) > left {
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			left -= float64(cost)
			rem := int64(left)
			reset := time.Duration((6000 - left) / 100 * float64(time.Second)).Round(time.Millisecond)
			w.Header().Set("x-ratelimit-limit-tokens", "6000")
			w.Header().Set("x-ratelimit-remaining-tokens", strconv.FormatInt(rem, 10))
			w.Header().Set("x-ratelimit-reset-tokens", reset.String())
		})
		c := declaredCostClient(h)
		send := func(tokens int64) int {
			code, err := sendDeclared(c, tokens)
			if err != nil {
				t.Fatal(err)
			}
			return code
		}
		send(100) // 5900 left, refilling at 100/s
		mu.Lock()
		refuseNext = true
		mu.Unlock()
		start := time.Now()
		if code := send(5000); code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		mu.Lock()
		defer mu.Unlock()
		n := len(arrivals)
		gap := arrivals[n-1].Sub(arrivals[n-2])
		t.Logf("took %v; retry sent %v after the refusal", time.Since(start), gap)
		if gap > 2*time.Second {
			t.Errorf("the retry waited %v after a refusal asking 1s: the server had ~5900 tokens left and did not count the refused request, but polite charged its 5000 tokens", gap)
		}
	})
}
