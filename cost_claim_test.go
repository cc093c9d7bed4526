package polite_test

import (
	"context"
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

// complete sends a completion of in prompt and out output tokens through
// c, and reports how long it took and whether it failed.
func complete(ctx context.Context, c *http.Client, in, out int64) (time.Duration, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/chat/completions",
		strings.NewReader(ratelimittest.TokenTask{Input: in, MaxOutput: out}.Body(ratelimittest.OpenAIAPI)))
	req.Header.Set("Content-Type", "application/json")
	began := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return time.Since(began), err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return time.Since(began), fmt.Errorf("status %d", resp.StatusCode)
	}
	return time.Since(began), nil
}

// TestCostClaimGoesWithItsClaimant: a completion held for its cost more
// than a minute claims a turn of the requests that cost; a bigger one that
// first asks after it is held behind that claim, and claims its place. The
// claimant then gives up (its context ends). The one behind is held for
// its own cost only, and a small request the quota has room for goes at
// once. The place it claimed behind the claimant held the small one until
// it was granted, 6 s here; with a Store shared by two processes too.
func TestCostClaimGoesWithItsClaimant(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprint("shared=", shared), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 1000, Tokens: 40000, Latency: 100 * time.Millisecond})
				a := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}}
				b := a
				if shared {
					store := newBytesStore()
					a = &http.Client{Transport: &polite.Transport{Budget: &polite.Budget{Store: store}, Base: &ratelimittest.Transport{Handler: h}}}
					b = &http.Client{Transport: &polite.Transport{Budget: &polite.Budget{Store: store}, Base: &ratelimittest.Transport{Handler: h}}}
				}
				start := time.Now()
				if _, err := complete(t.Context(), a, 30000, 9000); err != nil { // most of the quota
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				wg.Go(func() { // small requests overtake the claimant for a minute
					for time.Since(start) < 61500*time.Millisecond {
						complete(t.Context(), a, 400, 100)
						time.Sleep(time.Second)
					}
				})
				wg.Go(func() { // the claimant, 39,000 tokens, gives up at +64 s
					ctx, cancel := context.WithCancel(t.Context())
					defer cancel()
					time.AfterFunc(64*time.Second, cancel)
					complete(ctx, a, 30000, 9000)
				})
				time.Sleep(62 * time.Second)
				wg.Go(func() { complete(t.Context(), b, 15000, 5000) }) // behind the claim
				time.Sleep(3 * time.Second)
				if d, err := complete(t.Context(), b, 400, 100); err != nil || d > time.Second {
					t.Errorf("500 tokens the quota has room for: %v after %v, once the claimant left; want at once", err, d)
				}
				wg.Wait()
			})
		})
	}
}
