package polite_test

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A server that states nothing (ratelimittest's RetryAfterOnly dialect: a
// fixed window of 10 a second, refusals with Retry-After) is down from 2 to
// 4 minutes: a load balancer in front answers every request 503 with
// Retry-After: 1. Then it serves as before. 16 workers loop on requests.
//
// README: what a server that says nothing accepts before a refusal, and how
// long until it accepts again, "become a learned quota that paces the
// origin and grows back when refusals stop". The measurement that spans the
// outage doubles the learned window at most; measured whole, the outage
// was learned as the window (its refused cycle's few requests per two
// minutes), and the key stayed near that rate, with no refusal, in about
// one run of three. The test fails when any run is left below a third of
// the server's rate 10 to 20 minutes after the outage (a tenth when it
// ends unevenly).
//
// The outage may end unevenly too, as a rolling restart behind a load
// balancer does: down in every other 3-second span for 30 s more. A lone
// probe refused there took the whole outage as the window for a while
// (learned 9 per 5 minutes) in 4 to 6 runs of 20.
func TestLearnedQuotaAfterOutageGrowsBack(t *testing.T) {
	for _, tc := range []struct {
		name  string
		down  func(d time.Duration) bool // whether the server is down d into the run
		least int64                      // accepted in minutes 14 to 24, at least
	}{
		{"clean end", func(d time.Duration) bool { return d >= 2*time.Minute && d < 4*time.Minute }, 2000},
		// The refusals of the uneven end cut the learned quota again:
		// 1700 to 2000 accepted.
		{"uneven end", func(d time.Duration) bool {
			return d >= 2*time.Minute && d < 4*time.Minute ||
				d >= 4*time.Minute && d < 4*time.Minute+30*time.Second && (d-4*time.Minute)/(3*time.Second)%2 == 1
		}, 600},
	} {
		t.Run(tc.name, func(t *testing.T) { outageGrowsBack(t, tc.down, tc.least) })
	}
}

// outageGrowsBack runs TestLearnedQuotaAfterOutageGrowsBack with the
// server down whenever down says, and fails t when a run accepts fewer
// than least in minutes 14 to 24.
func outageGrowsBack(t *testing.T, down func(d time.Duration) bool, least int64) {
	runs := 12
	switch {
	case raceEnabled:
		runs = 1 // 24 minutes each, in a bubble: 4 s of the race detector's time
	case testing.Short():
		runs = 3
	}
	stuck := 0
	for run := range runs {
		synctest.Test(t, func(st *testing.T) {
			present()
			inner := ratelimittest.NewHandler(ratelimittest.Config{
				Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: time.Second}},
				Dialect:  ratelimittest.RetryAfterOnly,
				Latency:  50 * time.Millisecond,
			})
			start := time.Now()
			var served [30]atomic.Int64 // accepted per minute
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if down(time.Since(start)) {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				sw := &statusWriter{ResponseWriter: w}
				inner.ServeHTTP(sw, r)
				if sw.code() == 200 {
					if m := int(time.Since(start) / time.Minute); m < len(served) {
						served[m].Add(1)
					}
				}
			})
			loopUntil(&http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}}, 16, start.Add(24*time.Minute))
			pre := served[1].Load()
			var last int64
			for m := 14; m < 24; m++ {
				last += served[m].Load()
			}
			t.Logf("run %d: accepted in minute 1: %d; in minutes 14-24: %d (the server takes 6000)", run, pre, last)
			if last < least {
				stuck++
				t.Logf("run %d: 10 to 20 minutes after a 2-minute outage, %d accepted in 10 minutes (the server takes 6000; %d in minute 1 before the outage)", run, last, pre)
			}
		})
	}
	if stuck > 0 {
		t.Errorf("%d of %d runs: the learned quota did not grow back once refusals stopped (below %d accepted in minutes 14 to 24 after a 2-minute outage; the server takes 6000)", stuck, runs, least)
	}
}

// loopUntil runs workers goroutines, each sending GETs through c one after
// another until end, a second apart after an error, and returns when all
// are done.
func loopUntil(c *http.Client, workers int, end time.Time) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for time.Now().Before(end) {
				req, _ := http.NewRequest("GET", "http://api.test/", nil)
				resp, err := c.Do(req)
				if err != nil {
					time.Sleep(time.Second)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}
