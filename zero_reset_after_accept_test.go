package polite_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A server that refuses every request with a spent quota whose reset is
// "now" (draft-11 `RateLimit: "x";r=0;t=0`, draft-06 `RateLimit-Remaining:
// 0` and `RateLimit-Reset: 0`, `X-RateLimit-Reset` equal to its Date) gets
// from a caller looping on one client the floor doubled with each refusal
// in a row (doc.go, "Retries": "a reset already past, waits a second,
// doubled with each such refusal in a row (up to a minute)"): 7 requests
// in a minute. It did only when the key had accepted nothing: one 200
// stating the same fields first, and every refusal after it was followed
// by a request a second later, 60 in a minute (the floor at the end of a
// window, kept for as long as no pause renewed the key's cycle).
func TestZeroResetAfterAcceptBacksOff(t *testing.T) {
	cases := []struct {
		name string
		set  func(now time.Time, h http.Header)
	}{
		{"ietf11 r=0;t=0", func(now time.Time, h http.Header) { h.Set("RateLimit", `"x";r=0;t=0`) }},
		{"draft06 remaining 0 reset 0", func(now time.Time, h http.Header) {
			h.Set("RateLimit-Limit", "10")
			h.Set("RateLimit-Remaining", "0")
			h.Set("RateLimit-Reset", "0")
		}},
		{"x-ratelimit reset epoch now", func(now time.Time, h http.Header) {
			h.Set("X-RateLimit-Limit", "10")
			h.Set("X-RateLimit-Remaining", "0")
			h.Set("X-RateLimit-Reset", strconv.FormatInt(now.Unix(), 10))
		}},
	}
	for _, tc := range cases {
		for _, acceptFirst := range []bool{false, true} {
			name := tc.name + "/no-200-first"
			if acceptFirst {
				name = tc.name + "/one-200-first"
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var mu sync.Mutex
					n, refused := 0, 0
					var refusedAt []time.Duration
					start := time.Now()
					h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						mu.Lock()
						i := n
						n++
						mu.Unlock()
						now := time.Now()
						tc.set(now, w.Header())
						if acceptFirst && i == 0 {
							w.WriteHeader(http.StatusOK)
							return
						}
						mu.Lock()
						refused++
						refusedAt = append(refusedAt, now.Sub(start).Round(time.Millisecond))
						mu.Unlock()
						w.WriteHeader(http.StatusTooManyRequests)
					})
					c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}}
					end := start.Add(60 * time.Second)
					for time.Now().Before(end) {
						req, _ := http.NewRequest("GET", "http://api.test/", nil)
						ctx, cancel := contextUntil(end)
						resp, err := c.Do(req.WithContext(ctx))
						cancel()
						if err != nil {
							time.Sleep(100 * time.Millisecond)
							continue
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					mu.Lock()
					defer mu.Unlock()
					// Doubling from 1 s (±25%) up to a minute: 1+2+4+8+16+32 s
					// reach 60 s within 7 refusals; allow slack.
					if refused > 12 {
						t.Errorf("%d refusals in 60 s from one looping caller, want at most 12 (the floor doubled per refusal in a row); refusals at %v", refused, refusedAt)
					}
				})
			})
		}
	}
}

// contextUntil is context.WithDeadline(context.Background(), end).
func contextUntil(end time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.Background(), end)
}
