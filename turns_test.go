package polite_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// TestTurnsBoundTheLongestWait runs 16 workers through 200 tasks against
// servers that state their quota, 20 per 4s: held requests start in the
// order they first asked (control's turn.go), so no task waits much more
// than the window it was held for. Before turns, the request that lost
// the race at each window's start could lose it again: the longest task
// took 16s (a fixed window) and 12s (a token bucket), where most took
// one window.
func TestTurnsBoundTheLongestWait(t *testing.T) {
	for _, a := range []ratelimittest.Algorithm{ratelimittest.FixedWindow, ratelimittest.TokenBucket} {
		t.Run(string(a), func(t *testing.T) {
			cfg := ratelimittest.Config{
				Policies: []ratelimittest.Policy{{Name: "api", Algorithm: a, Quota: 20, Window: 4 * time.Second}},
				Dialect:  ratelimittest.IETF, Latency: 5 * time.Millisecond,
			}
			synctest.Test(t, func(t *testing.T) {
				time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
				c, _ := politeOver(ratelimittest.NewHandler(cfg))
				statuses, longest := runLongest(t, c, "http://api.test/", 200, 16)
				if statuses[http.StatusOK] != 200 {
					t.Fatalf("statuses %v, want 200 ok", statuses)
				}
				if limit := 4*time.Second + 500*time.Millisecond; longest > limit {
					t.Errorf("the longest task took %v, want at most %v (a window and a half second)", longest, limit)
				}
			})
		})
	}
}

// TestTurnPassesWhenItsRequestGivesUp checks that a held request whose
// context ends gives up its place at once: the request held behind it
// goes at the instant the hold ends, not a grace later.
func TestTurnPassesWhenItsRequestGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
		start := time.Now()
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 1, Window: time.Second}},
			Dialect:  ratelimittest.IETF,
		})
		var (
			mu      sync.Mutex
			arrived []time.Duration
		)
		c, _ := politeOver(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			arrived = append(arrived, time.Since(start))
			mu.Unlock()
			h.ServeHTTP(w, r)
		}))
		get := func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			resp, err := c.Do(req)
			if err != nil {
				return err
			}
			io.Copy(io.Discard, resp.Body)
			return resp.Body.Close()
		}
		if err := get(t.Context()); err != nil { // spends the window's one request
			t.Fatal(err)
		}
		// a, held to the next window at 1s, claims it; b, younger, is
		// held behind a; a gives up at 500ms.
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 2)
		go func() { done <- get(ctx) }()
		time.Sleep(100 * time.Millisecond)
		go func() { done <- get(t.Context()) }()
		time.Sleep(400 * time.Millisecond)
		cancel()
		for range 2 {
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(arrived) != 2 || arrived[1] >= time.Second+50*time.Millisecond {
			t.Errorf("requests arrived at %v, want b at the window's start, before a grace (50ms) past it", arrived)
		}
	})
}
