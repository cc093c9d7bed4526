package ratelimittest_test

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

func TestIdeal(t *testing.T) {
	perSecond := func(a ratelimittest.Algorithm, q int64) []ratelimittest.Policy {
		return []ratelimittest.Policy{{Algorithm: a, Quota: q, Window: time.Second}}
	}
	tests := []struct {
		name           string
		cfg            ratelimittest.Config
		tasks, workers int
		want           time.Duration
	}{
		// 10 per window: the 100th request goes in the tenth window, at 9s.
		{"fixed window", ratelimittest.Config{Policies: perSecond(ratelimittest.FixedWindow, 10)}, 100, 16, 9 * time.Second},
		// A burst of 10, then one every 100ms: the 100th at 9s.
		{"token bucket", ratelimittest.Config{Policies: perSecond(ratelimittest.TokenBucket, 10)}, 100, 16, 9 * time.Second},
		{"sliding log", ratelimittest.Config{Policies: perSecond(ratelimittest.SlidingLog, 10)}, 100, 16, 9 * time.Second},
		// One worker: sends at 0 and 0.3s, then when each leaves the log: 1s, 1.3s, 2s; the last ends at 2.3s.
		{"sliding log latency", ratelimittest.Config{Latency: 300 * time.Millisecond, Policies: perSecond(ratelimittest.SlidingLog, 2)}, 5, 1, 2300 * time.Millisecond},
		// Two at 0; at 1.5s prev=2 weighs 1; at 2s prev=1 weighs 1 again.
		{"sliding window counter 4", ratelimittest.Config{Policies: perSecond(ratelimittest.SlidingWindow, 2)}, 4, 8, 2 * time.Second},
		{"sliding window counter 5", ratelimittest.Config{Policies: perSecond(ratelimittest.SlidingWindow, 2)}, 5, 8, 3 * time.Second},
		// Four at a time, a second each: three rounds.
		{"concurrency", ratelimittest.Config{Latency: time.Second, Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.Concurrency, Quota: 4}}}, 10, 16, 3 * time.Second},
		{"concurrency few workers", ratelimittest.Config{Latency: time.Second, Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.Concurrency, Quota: 4}}}, 10, 2, 5 * time.Second},
		// Two at a time every 300ms; the fixed window admits the 9th and 10th at 1.2s.
		{"concurrency and window", ratelimittest.Config{Latency: 300 * time.Millisecond, Policies: []ratelimittest.Policy{
			{Algorithm: ratelimittest.Concurrency, Quota: 2},
			{Quota: 10, Window: time.Second},
		}}, 10, 16, 1500 * time.Millisecond},
		// Tokens outpace four workers busy a second each: 25 rounds.
		{"workers bound", ratelimittest.Config{Latency: time.Second, Policies: perSecond(ratelimittest.TokenBucket, 10)}, 100, 4, 25 * time.Second},
		// Two in the first second, a third at 1s, the fourth when the first leaves the log.
		{"two policies", ratelimittest.Config{Policies: []ratelimittest.Policy{
			{Quota: 2, Window: time.Second},
			{Algorithm: ratelimittest.SlidingLog, Quota: 3, Window: 10 * time.Second},
		}}, 4, 8, 10 * time.Second},
		// 2-byte bodies, 5 per window.
		{"content bytes", ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Second, Unit: "content-bytes"}}}, 12, 4, 2 * time.Second},
		// Windows end at 1.5s, 3.5s, 5.5s and 7.5s.
		{"phase", ratelimittest.Config{Phase: 500 * time.Millisecond, Policies: []ratelimittest.Policy{{Quota: 20, Window: 2 * time.Second}}}, 100, 16, 7500 * time.Millisecond},
		// Two at 0; prev=2 weighs round(1.5) = 2 until just after 1.25s, round(0.5) = 1 until just after 1.75s.
		{"sliding window counter rounded", ratelimittest.Config{Policies: perSecond(ratelimittest.SlidingWindowRounded, 2)}, 4, 8, 1750*time.Millisecond + 1},
		// nginx rate=10r/s burst=5 nodelay: six at once, then one every 100ms.
		{"leaky bucket", ratelimittest.Config{Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.LeakyBucket, Quota: 10, Window: time.Second, Burst: 5}}}, 100, 16, 9400 * time.Millisecond},
		{"leaky bucket no burst", ratelimittest.Config{Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.LeakyBucket, Quota: 10, Window: time.Second}}}, 10, 16, 900 * time.Millisecond},
		// The hung request ends the run; the other workers do the rest by 8s.
		{"hang", ratelimittest.Config{Hang: 10 * time.Second, Policies: []ratelimittest.Policy{{Quota: 20, Window: 2 * time.Second}}}, 100, 16, 10 * time.Second},
		// One worker: two hangs of a second in a row, then the third at once.
		{"hang one worker", ratelimittest.Config{Hang: time.Second, HangRequests: 2}, 3, 1, 2 * time.Second},
		// The request after the hang waits for the next window.
		{"hang then window", ratelimittest.Config{Hang: 500 * time.Millisecond, Policies: perSecond(ratelimittest.FixedWindow, 2)}, 3, 16, time.Second},
		{"hang forever", ratelimittest.Config{Hang: -1}, 1, 1, math.MaxInt64},
		// Two streams of 600ms at a time: eight rounds.
		{"streams", ratelimittest.Config{Stream: 600 * time.Millisecond, Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.Concurrency, Quota: 2}}}, 16, 8, 4800 * time.Millisecond},
		{"stream and latency", ratelimittest.Config{Latency: 100 * time.Millisecond, Stream: 500 * time.Millisecond}, 4, 2, 1200 * time.Millisecond},
		// 3 events of "data: ok\n\n": 30 bytes a stream, two per window.
		{"stream content bytes", ratelimittest.Config{Stream: time.Second, StreamEvents: 3, Policies: []ratelimittest.Policy{{Quota: 60, Window: 10 * time.Second, Unit: "content-bytes"}}}, 5, 8, 21 * time.Second},
		// Faults that only change what the Handler says play no part.
		{"faults", ratelimittest.Config{RetryAfterZero: true, Drip: time.Second, UTCDates: true, ResetRounding: ratelimittest.RoundDown, Policies: perSecond(ratelimittest.FixedWindow, 10)}, 100, 16, 9 * time.Second},
		{"no policies", ratelimittest.Config{Latency: time.Second}, 100, 10, 10 * time.Second},
		{"no policies no latency", ratelimittest.Config{}, 100, 10, 0},
		{"no workers means one", ratelimittest.Config{Latency: time.Second}, 3, 0, 3 * time.Second},
		{"no tasks", ratelimittest.Config{Policies: perSecond(ratelimittest.FixedWindow, 1)}, 0, 1, 0},
		{"never", ratelimittest.Config{BodySize: 2, Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Second, Unit: "content-bytes"}}}, 1, 1, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ratelimittest.Ideal(tt.cfg, tt.tasks, tt.workers); got != tt.want {
				t.Errorf("Ideal(%d tasks, %d workers) = %v, want %v", tt.tasks, tt.workers, got, tt.want)
			}
		})
	}
}

// TestIdealReached runs a client that honours Retry-After against a fixed
// window: because the window ends and the responses fall on whole seconds,
// the honest Retry-After lets it match Ideal exactly.
func TestIdealReached(t *testing.T) {
	cfg := ratelimittest.Config{
		Latency:  time.Second,
		Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Second}},
	}
	const tasks, workers = 100, 16
	want := ratelimittest.Ideal(cfg, tasks, workers)
	if want != 10*time.Second {
		t.Fatalf("Ideal = %v, want 10s", want)
	}
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(cfg)
		c := client(h)
		var mu sync.Mutex
		left := tasks
		start := time.Now()
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					mu.Lock()
					if left == 0 {
						mu.Unlock()
						return
					}
					left--
					mu.Unlock()
					for {
						resp, _ := send(t, c, "")
						if resp.StatusCode == http.StatusOK {
							break
						}
						s, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
						time.Sleep(time.Duration(s) * time.Second)
					}
				}
			})
		}
		wg.Wait()
		if got := time.Since(start); got != want {
			t.Errorf("client took %v, Ideal says %v", got, want)
		}
		if s := h.Stats(); s.Admitted != tasks {
			t.Errorf("Admitted = %d, want %d", s.Admitted, tasks)
		}
	})
}

// TestIdealRealWorld pins what Ideal says of servers shaped like widely
// deployed limiters, 100 tasks over 16 workers (the streaming one: 16 over
// 8), quota 20 per 2s unless the limiter's own example says otherwise.
func TestIdealRealWorld(t *testing.T) {
	twoSeconds := []ratelimittest.Policy{{Quota: 20, Window: 2 * time.Second}}
	half := 500 * time.Millisecond
	tests := []struct {
		name           string
		cfg            ratelimittest.Config
		tasks, workers int
		want           time.Duration
	}{
		{"ulule/limiter: epoch reset rounded down, no Retry-After", ratelimittest.Config{
			Dialect: ratelimittest.XRateLimitEpoch, ResetRounding: ratelimittest.RoundDown, RetryAfter: -1, Phase: half, Policies: twoSeconds,
		}, 100, 16, 7500 * time.Millisecond},
		{"express-rate-limit legacy: epoch reset rounded up", ratelimittest.Config{
			Dialect: ratelimittest.XRateLimitEpoch, Phase: half, Policies: twoSeconds,
		}, 100, 16, 7500 * time.Millisecond},
		{"GitHub shape, 1s windows", ratelimittest.Config{
			Dialect: ratelimittest.GitHub, Phase: half, Policies: []ratelimittest.Policy{{Quota: 20, Window: time.Second}},
		}, 100, 16, 3500 * time.Millisecond},
		{"go-chi/httprate", ratelimittest.Config{
			Dialect: ratelimittest.HTTPRate, Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.SlidingWindowRounded, Quota: 20, Window: 2 * time.Second}},
		}, 100, 16, 9950*time.Millisecond + 1},
		{"nginx limit_req rate=10r/s burst=5 nodelay", ratelimittest.Config{
			Dialect: ratelimittest.Bare429, Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.LeakyBucket, Quota: 10, Window: time.Second, Burst: 5}},
		}, 100, 16, 9400 * time.Millisecond},
		{"sethvargo/go-limiter: dates in UTC", ratelimittest.Config{
			Dialect: ratelimittest.XRateLimitDate, UTCDates: true, ResetRounding: ratelimittest.RoundDown, Phase: half, Policies: twoSeconds,
		}, 100, 16, 7500 * time.Millisecond},
		{"Retry-After: 0", ratelimittest.Config{
			Dialect: ratelimittest.RetryAfterOnly, RetryAfterZero: true, Policies: twoSeconds,
		}, 100, 16, 8 * time.Second},
		{"refusals dripping a byte every 100ms", ratelimittest.Config{
			Dialect: ratelimittest.RetryAfterOnly, Drip: 100 * time.Millisecond, Policies: twoSeconds,
		}, 100, 16, 8 * time.Second},
		{"first request hangs 10s", ratelimittest.Config{
			Hang: 10 * time.Second, Policies: twoSeconds,
		}, 100, 16, 10 * time.Second},
		{"two streams of 600ms", ratelimittest.Config{
			Stream: 600 * time.Millisecond, Policies: []ratelimittest.Policy{{Name: "streams", Algorithm: ratelimittest.Concurrency, Quota: 2}},
		}, 16, 8, 4800 * time.Millisecond},
		{"two streams of 600ms, 100 tasks", ratelimittest.Config{
			Stream: 600 * time.Millisecond, Policies: []ratelimittest.Policy{{Name: "streams", Algorithm: ratelimittest.Concurrency, Quota: 2}},
		}, 100, 16, 30 * time.Second},
	}
	for _, tt := range tests {
		got := ratelimittest.Ideal(tt.cfg, tt.tasks, tt.workers)
		t.Logf("%s, %d tasks over %d workers: %v", tt.name, tt.tasks, tt.workers, got)
		if got != tt.want {
			t.Errorf("%s: Ideal(%d tasks, %d workers) = %v, want %v", tt.name, tt.tasks, tt.workers, got, tt.want)
		}
	}
}
