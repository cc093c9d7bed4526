package polite_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// State.WaitFor(c) says how long a request costing c would wait for the
// key's token quotas, were nothing else to change. A server that counts
// prompts twice as the estimate teaches the key a scale (DESIGN.md §10,
// "A server that counts more"), and the Transport waits for the cost plus
// that share and a quarter more; WaitFor, read with nothing in flight,
// reported the wait for the bare cost: 8.6 s where the request waited 21.
func TestWaitForIgnoresScale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 500, Tokens: 6000,
			Prompt: func(e int64) int64 { return 2 * e }})
		c, tr := politeOver(h)
		send := func(task ratelimittest.TokenTask) {
			req, _ := http.NewRequest(http.MethodPost, "http://llm.example/v1/chat/completions", strings.NewReader(task.Body(ratelimittest.OpenAIAPI)))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		for range 8 {
			send(ratelimittest.TokenTask{Input: 1000, MaxOutput: 100})
		}
		task := ratelimittest.TokenTask{Input: 1000, MaxOutput: 100}
		req, _ := http.NewRequest(http.MethodPost, "http://llm.example/v1/chat/completions", strings.NewReader(task.Body(ratelimittest.OpenAIAPI)))
		cost := polite.EstimateCost(req)
		st, _ := tr.Inspect("http://llm.example", time.Now())
		want, err := st.WaitFor(cost)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Policies {
			t.Logf("%s %s: quota %d remaining %d reserved %d refill %.1f/s", p.Name, p.Unit, p.Quota, p.Remaining, p.Reserved, p.Refill)
		}
		start := time.Now()
		send(task)
		took := time.Since(start)
		t.Logf("cost %v: WaitFor %v, waited %v; refused so far %d", cost, want, took, h.Stats().Refused)
		if took > want+want/4+time.Second {
			t.Errorf("WaitFor(%v) = %v with nothing in flight, but the request waited %v", cost, want, took)
		}
	})
}
