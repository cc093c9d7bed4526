package polite_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// Anthropic states its resets as instants, rounded up to the second, and
// the refill rate estimated from them is never above the true rate: the
// reset is measured from when the answer was written, not from when it was
// read. Measured from the read, an answer that crossed 200 ms of network
// made the reset look closer than it was and the rate too high (103.7
// tokens a second for 100), and a client that declared its costs exactly
// was refused by an honest TokenHandler.
func TestAnthropicRefillRateFromWriting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 6000 input tokens a minute: 100 a second.
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{
			API: ratelimittest.AnthropicAPI, InputTokens: 6000, OutputTokens: 10000,
		})
		inner := &ratelimittest.Transport{Handler: h}
		var log strings.Builder
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			time.Sleep(200 * time.Millisecond) // the network, each way
			resp, err := inner.RoundTrip(r)
			time.Sleep(200 * time.Millisecond)
			if resp != nil {
				fmt.Fprintf(&log, "%v: %d input-tokens remaining %s reset %s\n", time.Since(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)),
					resp.StatusCode, resp.Header.Get("anthropic-ratelimit-input-tokens-remaining"), resp.Header.Get("anthropic-ratelimit-input-tokens-reset"))
			}
			return resp, err
		})
		c := &http.Client{Transport: &polite.Transport{Base: base}}
		send := func(in int64) int {
			tk := ratelimittest.TokenTask{Input: in}
			ctx := polite.WithCost(t.Context(), polite.Cost{InputTokens: in})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/messages", strings.NewReader(tk.Body(ratelimittest.AnthropicAPI)))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode
		}
		// Two answers for the key to know the server's clock (it agrees).
		send(7)
		send(7)
		// Written at 1.0 s with 5605 left, whole at 4.95 s: stated
		// 00:00:05, read at 1.2 s.
		send(395)
		send(5590) // 55 left
		if st, ok := c.Transport.(*polite.Transport).Inspect("http://llm.example/v1/messages", time.Now()); ok {
			for _, p := range st.Policies {
				if p.Unit == "input-tokens" && p.Refill > 100 {
					t.Errorf("input-tokens refill estimated at %.2f/s, above the true 100/s", p.Refill)
				}
			}
		}
		send(5950) // 5889 lacking: 58.9 s at 100 a second
		if st := h.Stats(); st.Refused != 0 {
			t.Errorf("%d of %d requests refused by an honest server, costs declared exactly\n%s", st.Refused, st.Requests, log.String())
		}
	})
}
