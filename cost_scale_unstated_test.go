package polite_test

import (
	"context"
	"net/http"
	"strconv"
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
// 34 to 48 since). With every answer stating its quota it reserves 2,547.
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
