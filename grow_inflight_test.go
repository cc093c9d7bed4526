package polite_test

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A retry the server counted as more than the room stated waits for room
// for its cost doubled (control.Ask.Grow). Capped at the quota's limit
// alone, a grown need the room beside the requests in flight could not
// hold (the whole limit, 60,000 tokens, with another request of 100 tokens
// in flight) was a hold with no end known: the retry waited for every
// request in flight to end, and failed at its deadline, or without one
// waited for the request in flight (200 s here; MaxWait, 10 minutes by
// default, with requests always in flight). The grown need is capped at
// what the quota can hold beside the requests in flight now: the retry
// goes once the quota is whole again (30 s), or sooner.
//
// The scene: a request of 25,000 tokens the server counts 32,500 is
// refused with 30,100 left; the other request, a GET costing 100 that
// first asked before it and failed once (502, RetryTransient), goes after
// the refusal's pause and streams its answer for 200 s.
func TestGrownRetryBesideRequestInFlight(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline time.Duration
	}{
		{"deadline 40s", 40 * time.Second},
		{"no deadline", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newTokenBucket(60000, 1000, 30200)
				var failed atomic.Bool
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("X-Fail-Once") != "" && !failed.Swap(true) {
						w.WriteHeader(http.StatusBadGateway)
						return
					}
					if d, _ := time.ParseDuration(r.Header.Get("X-Sleep")); d > 0 {
						select {
						case <-time.After(d):
						case <-r.Context().Done():
							return
						}
					}
					counted, _ := strconv.ParseFloat(r.Header.Get("X-Counted"), 64)
					b.answer(w, counted, false)
				})
				c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, RetryTransient: true}}
				send := func(ctx context.Context, method string, cost int64, counted int, sleep time.Duration, failOnce bool) (int, error) {
					ctx = polite.WithCost(ctx, polite.Cost{Tokens: cost})
					req, _ := http.NewRequestWithContext(ctx, method, "http://llm.example/v1/chat/completions", nil)
					req.Header.Set("X-Counted", strconv.Itoa(counted))
					req.Header.Set("X-Sleep", sleep.String())
					if failOnce {
						req.Header.Set("X-Fail-Once", "1")
					}
					return statusOf(c, req)
				}
				// The key learns the quota: 60,000 a minute, 30,100 left.
				if code, err := send(t.Context(), http.MethodPost, 100, 100, 0, false); code != http.StatusOK {
					t.Fatalf("first request: status %d, error %v", code, err)
				}
				other, cancelOther := context.WithCancel(t.Context())
				defer func() { cancelOther(); synctest.Wait() }()
				go send(other, http.MethodGet, 100, 100, 200*time.Second, true)
				synctest.Wait() // failed once, waiting to retry

				ctx := t.Context()
				if tc.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.deadline)
					defer cancel()
				}
				start := time.Now()
				code, err := send(ctx, http.MethodPost, 25000, 32500, 0, false)
				took := time.Since(start)
				if err != nil || code != http.StatusOK {
					t.Fatalf("after %v: status %d, error %v; want 200 (asked for its cost alone the retry goes at about 23 s, and is accepted)", took, code, err)
				}
				if took > time.Minute {
					t.Errorf("retry sent after %v, want within a minute: the quota is whole at 30 s, 100 of its tokens reserved by the request in flight", took)
				}
			})
		})
	}
}
