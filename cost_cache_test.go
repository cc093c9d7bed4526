package polite_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// An answer from a cache (Age > 0) changes no budget, nor does the request
// it answers (DESIGN.md §1.5), yet it was charged the request's tokens. An
// IETF server states 100 requests and 10,000 tokens a minute; after one
// fresh answer (9,900 tokens left), three requests of 3,000 tokens were
// answered by a cache: the key read 900 left, and a request of 9,000
// waited a minute where the origin still had 9,900.
func TestCachedAnswerChargesCost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		left := int64(10000)
		end := time.Now().Add(time.Minute)
		originSaw := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/cached" {
				w.Header().Set("Age", "5")
				return
			}
			cost, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
			mu.Lock()
			originSaw++
			left -= cost
			reset := int64((time.Until(end) + time.Second - 1) / time.Second)
			rem := left
			mu.Unlock()
			w.Header().Set("RateLimit-Policy", `"rpm";q=100;w=60, "tpm";q=10000;qu="tokens";w=60`)
			w.Header().Set("RateLimit", `"rpm";r=`+strconv.Itoa(100-originSaw)+`;t=`+strconv.FormatInt(reset, 10)+`, "tpm";r=`+strconv.FormatInt(rem, 10)+`;t=`+strconv.FormatInt(reset, 10))
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
		send := func(path string, tokens int64) {
			req, _ := http.NewRequestWithContext(polite.WithCost(t.Context(), polite.Cost{Tokens: tokens}), http.MethodGet, "http://llm.example"+path, nil)
			req.Header.Set("X-Cost", strconv.FormatInt(tokens, 10))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			resp.Body.Close()
		}
		send("/fresh", 100) // 9900 left at the origin
		for range 3 {
			send("/cached", 3000)
		}
		st, _ := tr.Inspect("http://llm.example", time.Now())
		for _, p := range st.Policies {
			if p.Unit == "tokens" {
				t.Logf("after 3 cached answers: tokens remaining %d (origin has 9900), reserved %d", p.Remaining, p.Reserved)
			}
		}
		start := time.Now()
		send("/fresh", 9000)
		if d := time.Since(start); d > 0 {
			t.Errorf("a request of 9000 tokens waited %v though the origin had 9900 left: the 3 answers from a cache were charged 9000 tokens (DESIGN.md §1.5: the request a cached answer answers never changes a budget)", d)
		}
	})
}
