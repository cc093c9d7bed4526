package polite_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A server counting every prompt twice (1,000 in and 1,000 out declared,
// 3,000 counted), one request at a time. When the answer between two
// observations stated nothing, its charge came off the level while its
// reservation stayed in what the next answer was compared with, and the
// sample read 1×: the fourth request reserved its cost declared, 2,000,
// and the scale never rose while some answers stated nothing (56 to 64 of
// 150 refused in the 1.3× token scenario with every other answer bare,
// 23 to 57 since). With every answer stating its quota it reserves 2,547.
func TestScaleLearnedAcrossUnstatedAnswer(t *testing.T) {
	for _, bare := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			const limit = 60000
			var (
				mu       sync.Mutex
				spent    int64
				n        int
				tr       *polite.Transport
				reserved int64 = -1
			)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				if n++; n == 4 {
					st, _ := tr.Inspect("http://llm.example", time.Now())
					for _, p := range st.Policies {
						if p.Unit == "tokens" {
							reserved = p.Reserved
						}
					}
				}
				spent += 3000
				if bare && n == 2 {
					return
				}
				hd := w.Header()
				hd.Set("x-ratelimit-limit-tokens", strconv.Itoa(limit))
				hd.Set("x-ratelimit-remaining-tokens", strconv.FormatInt(limit-spent, 10))
				hd.Set("x-ratelimit-reset-tokens", (time.Duration(spent) * time.Millisecond).String())
			})
			tr = &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
			c := &http.Client{Transport: tr}
			for range 4 {
				ctx := polite.WithCost(context.Background(), polite.Cost{Tokens: 2000, InputTokens: 1000, OutputTokens: 1000})
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/chat/completions", nil)
				if code, err := statusOf(c, req); code != 200 {
					t.Fatalf("%d %v", code, err)
				}
			}
			if reserved <= 2000 {
				t.Errorf("second answer bare %v: the fourth request reserved %d, its cost declared; the scale did not rise", bare, reserved)
			}
		})
	}
}

// The 1.3× row of the token scenarios with every other accepted answer
// stripped of its rate-limit fields (a proxy's or an error page's answer,
// charged the safe side): 56 to 64 of 150 refused, a task failed in one
// run of five, while the scale went unlearned; 23 to 57 since (38 to 40 on
// average, over 300 runs and 100 under the race detector). Every answer
// stating its quota, the row sees at most 5. A task also failed about
// once in 100 runs under the race detector, a large request refused at
// each of its 8 attempts while smaller ones, asked after it, took the
// tokens its retries waited for; a retry holds its place now (see
// DESIGN.md §3). The bound is on the average of four runs, which the
// tail of one does not reach; what is left is left alone (see DESIGN.md
// §10).
func TestTokensSomeAnswersBare(t *testing.T) {
	const runs = 4
	refused := 0
	for range runs {
		synctest.Test(t, func(t *testing.T) {
			cfg := ratelimittest.TokenConfig{Requests: 500, Tokens: 40000, Latency: 500 * time.Millisecond, TokenLatency: 5 * time.Millisecond, Prompt: counted(1.3)}
			h := ratelimittest.NewTokenHandler(cfg)
			inner := &ratelimittest.Transport{Handler: h}
			var mu sync.Mutex
			n := 0
			rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				resp, err := inner.RoundTrip(r)
				if err == nil && resp.StatusCode == http.StatusOK {
					mu.Lock()
					n++
					bare := n%2 == 0
					mu.Unlock()
					if bare {
						for k := range resp.Header {
							if strings.HasPrefix(strings.ToLower(k), "x-ratelimit-") {
								delete(resp.Header, k)
							}
						}
					}
				}
				return resp, err
			})
			c := &http.Client{Transport: &polite.Transport{Base: rt}}
			r := runTokens(t, h, c, ratelimittest.OpenAIAPI, tokenWorkload(150), 16)
			t.Logf("ok %d, failed %d, refused %d, took %v", r.ok, r.failed, r.refused, r.took)
			if r.ok != 150 {
				t.Errorf("%d of 150 ok; want all", r.ok)
			}
			refused += r.refused
		})
	}
	if avg := float64(refused) / runs; avg > 48 {
		t.Errorf("%.1f of 150 refused on average over %d runs; want at most 48", avg, runs)
	}
}
