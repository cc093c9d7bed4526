package polite_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

var (
	realtime      = flag.Int("realtime", 0, "runs of each real-time loopback case (0: skip)")
	realtimeLoop  = flag.Bool("realtimeloop", false, "run only the real-time Retry-After: 0 loop")
	realtimeCase  = flag.String("realtimecase", "", "run only the real-time cases whose name holds this")
	realtimeTasks = flag.Int("realtimetasks", 100, "tasks of each real-time case")
)

// TestRealTimeLoopback runs 100 tasks over 16 workers through a polite
// client against each of the servers over loopback, in real time,
// and a caller looping on one client against a server whose refusals say
// Retry-After: 0. It takes minutes: run it with -realtime N (N runs of
// each case; -realtimecase S runs only the cases whose name holds S,
// -realtimetasks N runs N tasks instead of 100).
// Each server is created at a random instant within a second,
// as its windows start at a random phase in the wild; the case "windows
// ending just after a second" creates its server 2ms after one, the worst
// phase for whole-second resets.
func TestRealTimeLoopback(t *testing.T) {
	if *realtime == 0 && !*realtimeLoop {
		t.Skip("-realtime not set")
	}
	q20 := []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 20, Window: 2 * time.Second}}
	httprate := []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.SlidingWindowRounded, Quota: 20, Window: 2 * time.Second}}
	nginx := []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.LeakyBucket, Quota: 10, Window: time.Second, Burst: 5}}
	cases := []struct {
		name string
		cfg  ratelimittest.Config
	}{
		{"1 ulule (rounded down, no Retry-After)", ratelimittest.Config{Policies: q20, Dialect: ratelimittest.XRateLimitEpoch, ResetRounding: ratelimittest.RoundDown, RetryAfter: -1, Phase: 500 * time.Millisecond}},
		{"2 Retry-After: 0", ratelimittest.Config{Policies: q20, Dialect: ratelimittest.RetryAfterOnly, RetryAfterZero: true}},
		{"3 httprate", ratelimittest.Config{Policies: httprate, Dialect: ratelimittest.HTTPRate}},
		{"3 httprate headers off", ratelimittest.Config{Policies: httprate, Dialect: ratelimittest.Bare429}},
		{"4 express (rounded up)", ratelimittest.Config{Policies: q20, Dialect: ratelimittest.XRateLimitEpoch, Phase: 500 * time.Millisecond}},
		{"4 github 1s windows", ratelimittest.Config{Policies: []ratelimittest.Policy{{Name: "api", Quota: 20, Window: time.Second}}, Dialect: ratelimittest.GitHub, Phase: 500 * time.Millisecond}},
		{"4 x-ratelimit-epoch 1s windows", ratelimittest.Config{Policies: []ratelimittest.Policy{{Name: "api", Quota: 20, Window: time.Second}}, Dialect: ratelimittest.XRateLimitEpoch}},
		{"4 x-ratelimit-epoch 1s windows ending just after a second", ratelimittest.Config{Policies: []ratelimittest.Policy{{Name: "api", Quota: 20, Window: time.Second}}, Dialect: ratelimittest.XRateLimitEpoch}},
		{"5 nginx 10r/s burst=5", ratelimittest.Config{Policies: nginx, Dialect: ratelimittest.Bare429}},
		{"6 UTC dates", ratelimittest.Config{Policies: q20, Dialect: ratelimittest.XRateLimitDate, UTCDates: true, ResetRounding: ratelimittest.RoundDown, Phase: 500 * time.Millisecond}},
	}
	tasks, workers := *realtimeTasks, 16
	for _, c := range cases {
		if *realtime == 0 {
			break
		}
		if !strings.Contains(c.name, *realtimeCase) {
			continue
		}
		var effs []float64
		var lines []string
		for range *realtime {
			// Start the server's windows at a random phase, or 2ms after
			// a whole second.
			phase := time.Duration(rand.Int64N(int64(time.Second)))
			if strings.Contains(c.name, "just after") {
				phase = 2 * time.Millisecond
			}
			now := time.Now()
			time.Sleep(now.Truncate(time.Second).Add(time.Second + phase).Sub(now))
			srv := ratelimittest.NewServer(c.cfg)
			base := &http.Transport{MaxIdleConnsPerHost: 100}
			tr := &polite.Transport{Base: base}
			cl := &http.Client{Transport: tr}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			var next, ok atomic.Int64
			var wg sync.WaitGroup
			start := time.Now()
			for range workers {
				wg.Go(func() {
					for next.Add(1) <= int64(tasks) {
						req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
						resp, err := cl.Do(req)
						if err != nil {
							continue
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode == 200 {
							ok.Add(1)
						}
					}
				})
			}
			wg.Wait()
			took := time.Since(start)
			cancel()
			st := srv.Handler.Stats()
			ideal := ratelimittest.Ideal(c.cfg, tasks, workers)
			eff := ideal.Seconds() / took.Seconds()
			effs = append(effs, eff)
			lines = append(lines, fmt.Sprintf("ok %d refused %d took %.2fs ideal %.2fs eff %.3f", ok.Load(), st.Refused, took.Seconds(), ideal.Seconds(), eff))
			base.CloseIdleConnections()
			srv.Close()
		}
		sort.Float64s(effs)
		t.Logf("%s: worst %.3f median %.3f\n    %v", c.name, effs[0], effs[len(effs)/2], lines)
	}
	// A caller looping on one client against a server whose refusals say
	// Retry-After: 0.
	srv := ratelimittest.NewServer(ratelimittest.Config{Policies: q20, Dialect: ratelimittest.RetryAfterOnly, RetryAfterZero: true})
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	cl := &http.Client{Transport: &polite.Transport{Base: base}}
	// Spend the window first, so that the loop meets refusals.
	// Canceled after 10s, not given a deadline: a wait that would outlast
	// a deadline fails at once, unsent, and the loop would spin on it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(10*time.Second, cancel)
	start := time.Now()
	calls, failed := 0, 0
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := cl.Do(req)
		calls++
		if err != nil {
			failed++ // the loop was canceled while the request waited
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	st := srv.Handler.Stats()
	el := time.Since(start).Seconds()
	t.Logf("Retry-After: 0, one caller looping for %.1fs: %d requests at the server (%.1f/s), %d refused (%.1f/s); %d calls, %d of them ended by the cancellation", el, st.Requests, float64(st.Requests)/el, st.Refused, float64(st.Refused)/el, calls, failed)
}
