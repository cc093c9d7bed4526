package polite_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// Anthropic answers without a Date (a proxy that drops it), each after 30 s
// of generation: the refill rate estimated from them stays near the true
// 100 tokens a second. Most of those 30 s went before the answer was
// written, and counting them all in every reset kept the rate at 27.9 a
// second, a quarter of the quota, for as long as the limit stayed.
func TestAnthropicUndatedLongRequestsKeepRate(t *testing.T) {
	for _, dated := range []bool{true, false} {
		t.Run(fmt.Sprintf("dated=%v", dated), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{
					API: ratelimittest.AnthropicAPI, InputTokens: 6000, OutputTokens: 100000,
					Latency: 30 * time.Second,
				})
				inner := &ratelimittest.Transport{Handler: h}
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					time.Sleep(50 * time.Millisecond)
					resp, err := inner.RoundTrip(r)
					if resp != nil && !dated {
						resp.Header.Del("Date")
					}
					time.Sleep(50 * time.Millisecond)
					return resp, err
				})
				tr := &polite.Transport{Base: base}
				c := &http.Client{Transport: tr}
				send := func(in int64) {
					tk := ratelimittest.TokenTask{Input: in}
					ctx := polite.WithCost(t.Context(), polite.Cost{InputTokens: in})
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/messages", strings.NewReader(tk.Body(ratelimittest.AnthropicAPI)))
					resp, err := c.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				send(7)
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() { send(1400) })
				}
				wg.Wait()
				st, _ := tr.Inspect("http://llm.example/v1/messages", time.Now())
				for _, p := range st.Policies {
					if p.Unit == "input-tokens" {
						t.Logf("input-tokens refill %.1f/s (true 100/s)", p.Refill)
						if p.Refill < 80 {
							t.Errorf("input-tokens refill estimated at %.1f/s, under 80%% of the true 100/s", p.Refill)
						}
					}
				}
			})
		})
	}
}
