package polite_test

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// An OpenAI-compatible server that states its token reset as epoch
// seconds (read as an instant, measured from the answer's reading, as
// Anthropic's are): 200 ms of network each way does not make the refill
// rate come out above the true 100 tokens a second, and a request whose
// cost is declared exactly is not refused by an honest server. It did,
// the correction made for Anthropic's dialect alone.
func TestOpenAIEpochResetRefillFromWriting(t *testing.T) {
	for _, epoch := range []bool{false, true} {
		t.Run(fmt.Sprintf("epoch=%v", epoch), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
				h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{API: ratelimittest.OpenAIAPI, Tokens: 6000})
				inner := &ratelimittest.Transport{Handler: h}
				var log strings.Builder
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					time.Sleep(200 * time.Millisecond)
					resp, err := inner.RoundTrip(r)
					if resp != nil && epoch {
						// The server writes its reset as the epoch second the
						// quota is whole again, rounded up.
						if d, err := time.ParseDuration(resp.Header.Get("x-ratelimit-reset-tokens")); err == nil {
							at := time.Now().Add(d)
							sec := int64(math.Ceil(float64(at.UnixNano()) / 1e9))
							resp.Header.Set("x-ratelimit-reset-tokens", strconv.FormatInt(sec, 10))
						}
					}
					time.Sleep(200 * time.Millisecond)
					if resp != nil {
						fmt.Fprintf(&log, "%d remaining %s reset %s\n", resp.StatusCode,
							resp.Header.Get("x-ratelimit-remaining-tokens"), resp.Header.Get("x-ratelimit-reset-tokens"))
					}
					return resp, err
				})
				tr := &polite.Transport{Base: base}
				c := &http.Client{Transport: tr}
				send := func(in int64) int {
					tk := ratelimittest.TokenTask{Input: in}
					ctx := polite.WithCost(t.Context(), polite.Cost{InputTokens: in})
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/chat/completions", strings.NewReader(tk.Body(ratelimittest.OpenAIAPI)))
					resp, err := c.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					return resp.StatusCode
				}
				send(7)
				send(7)
				send(395)
				send(5590)
				if st, ok := tr.Inspect("http://llm.example/v1/chat/completions", time.Now()); ok {
					for _, p := range st.Policies {
						if p.Unit == "tokens" && p.Refill > 100 {
							t.Errorf("tokens refill estimated at %.2f/s, above the true 100/s", p.Refill)
						}
					}
				}
				send(5950)
				if st := h.Stats(); st.Refused != 0 {
					t.Errorf("%d of %d requests refused by an honest server, costs declared exactly\n%s", st.Refused, st.Requests, log.String())
				}
			})
		})
	}
}
