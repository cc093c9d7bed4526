package polite_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// An answer from a cache (Age > 0) is charged its cost as an answer
// stating nothing is: a cache or proxy may send Age on answers the origin
// counted (against RFC 9111 §5.1), and a token refusal is explained by its
// cost quota, so that the guard of DESIGN.md §1.5 (a refusal after starts
// given back distrusts the quotas) never sees it. An OpenAI-shaped server
// of 20,000 tokens a minute, every other answer stamped Age: 3 and all
// counted; 10 workers send 60 tasks of 1000 prompt + 100 output tokens.
// Uncharged, 40 of 60 were refused.
func TestAgeOnCountedAnswersTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 1000, Tokens: 20000, Latency: 200 * time.Millisecond})
		var n atomic.Int64
		c, _ := politeOver(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1)%2 == 0 {
				w.Header().Set("Age", "3")
			}
			h.ServeHTTP(w, r)
		}))
		tasks := make(chan struct{}, 60)
		for range 60 {
			tasks <- struct{}{}
		}
		close(tasks)
		start := time.Now()
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				for range tasks {
					task := ratelimittest.TokenTask{Input: 1000, MaxOutput: 100}
					req, _ := http.NewRequest(http.MethodPost, "http://llm.example/v1/chat/completions", strings.NewReader(task.Body(ratelimittest.OpenAIAPI)))
					resp, err := c.Do(req)
					if err != nil {
						t.Error(err)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		s := h.Stats()
		t.Logf("60 tasks in %v: %d refused", time.Since(start), s.Refused)
		if s.Refused > 3 {
			t.Errorf("%d of 60 refused with Age on every other counted answer: the aged answers' tokens, which the origin counted, were not charged", s.Refused)
		}
	})
}
