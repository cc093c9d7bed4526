package polite_test

import (
	"flag"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

var smallQuotaRuns = flag.Int("smallquotaruns", 0, "runs of each row of the small-quota table (0: skip): servers that state nothing and whose limit is learned as a request or two a window; the worst efficiency and refusals")

// smallQuotaRow is a server that states nothing (bare 429s, 5 ms of
// latency) and that the learner paces at a request or a few a window:
// leaky buckets with little or no burst (nginx's limit_req), and fixed
// windows, sliding logs and buckets of one request.
type smallQuotaRow struct {
	name  string
	p     ratelimittest.Policy
	tasks int
}

func smallQuotaRows() []smallQuotaRow {
	ms := time.Millisecond
	leaky := func(q int64, w time.Duration, burst int64) ratelimittest.Policy {
		return ratelimittest.Policy{Name: "api", Algorithm: ratelimittest.LeakyBucket, Quota: q, Window: w, Burst: burst}
	}
	of := func(a ratelimittest.Algorithm, q int64, w time.Duration) ratelimittest.Policy {
		return ratelimittest.Policy{Name: "api", Algorithm: a, Quota: q, Window: w}
	}
	return []smallQuotaRow{
		{"leaky bucket 10/s, no burst", leaky(10, time.Second, 0), 100},
		{"leaky bucket 10/s, no burst", leaky(10, time.Second, 0), 1000},
		{"leaky bucket 5/s, no burst", leaky(5, time.Second, 0), 60},
		{"leaky bucket 2/s, no burst", leaky(2, time.Second, 0), 40},
		{"leaky bucket 2/s, no burst", leaky(2, time.Second, 0), 300},
		{"leaky bucket 50/s, no burst", leaky(50, time.Second, 0), 2000},
		{"leaky bucket 10/s, burst 1", leaky(10, time.Second, 1), 1000},
		{"leaky bucket 5/s, burst 10", leaky(5, time.Second, 10), 500},
		{"fixed window 1/1s", of(ratelimittest.FixedWindow, 1, time.Second), 30},
		{"fixed window 1/1s", of(ratelimittest.FixedWindow, 1, time.Second), 100},
		{"fixed window 1/200ms", of(ratelimittest.FixedWindow, 1, 200*ms), 500},
		{"sliding log 1/1s", of(ratelimittest.SlidingLog, 1, time.Second), 30},
		{"sliding log 2/1s", of(ratelimittest.SlidingLog, 2, time.Second), 300},
		{"sliding window 2/1s", of(ratelimittest.SlidingWindow, 2, time.Second), 300},
		{"token bucket 1/1s", of(ratelimittest.TokenBucket, 1, time.Second), 30},
		{"token bucket 1/300ms", of(ratelimittest.TokenBucket, 1, 300*ms), 500},
		{"token bucket 3/1s", of(ratelimittest.TokenBucket, 3, time.Second), 500},
	}
}

// runSmallQuota runs r once with 16 workers in a synctest bubble and
// returns its efficiency (the ideal run over polite's) and the requests
// the server refused.
func runSmallQuota(t *testing.T, r smallQuotaRow) (eff float64, refused int) {
	synctest.Test(t, func(t *testing.T) {
		present()
		cfg := ratelimittest.Config{Policies: []ratelimittest.Policy{r.p}, Dialect: ratelimittest.Bare429, Latency: 5 * time.Millisecond}
		h := ratelimittest.NewHandler(cfg)
		c, _ := politeOver(h)
		start := time.Now()
		statuses, _ := runLongest(t, c, "http://api.test/", r.tasks, 16)
		if statuses[200] != r.tasks {
			t.Errorf("%s, %d tasks: statuses %v, want every task served", r.name, r.tasks, statuses)
		}
		eff = ratelimittest.Ideal(cfg, r.tasks, 16).Seconds() / time.Since(start).Seconds()
		refused = h.Stats().Refused
	})
	return eff, refused
}

// TestSmallQuotaTable prints, for each server of smallQuotaRows, the worst
// efficiency and the most refusals over -smallquotaruns runs: the figures
// DESIGN.md §6 ("a quota of one request") quotes. It asserts nothing.
//
//	go test -run 'TestSmallQuotaTable$' -smallquotaruns 6 -v .
func TestSmallQuotaTable(t *testing.T) {
	if *smallQuotaRuns <= 0 {
		t.Skip("run with -smallquotaruns N")
	}
	for _, r := range smallQuotaRows() {
		worst, most := 2.0, 0
		for range *smallQuotaRuns {
			eff, refused := runSmallQuota(t, r)
			worst, most = min(worst, eff), max(most, refused)
		}
		t.Logf("%-28s %5d tasks: efficiency %.3f, refused %d (%.1f%%)", r.name, r.tasks, worst, most, 100*float64(most)/float64(r.tasks))
	}
}

// A learned quota of one request is not held at the rate of the last
// step that held for 32 learned windows at each refused step, nor does
// each lapse of its pins cost two or three refusals every 32 requests:
// nginx's limit_req with no burst, 10 and 50 a second, and a token
// bucket of one request per 300 ms were refused 6.3%, 6.5% and 6.6% of
// the time, at 0.865, 0.746 and 0.767 of ideal (DESIGN.md §6, "a quota of
// one request"). The bounds leave room for a run worse than the worst of
// 6 measured (1.7%, 1.7%, 3.2%; 0.907, 0.785, 0.776).
func TestLearnedQuotaOfOnePaces(t *testing.T) {
	for _, c := range []struct {
		name       string
		tasks      int
		minEff     float64
		maxRefused float64
	}{
		{"leaky bucket 10/s, no burst", 1000, 0.88, 0.04},
		{"leaky bucket 50/s, no burst", 2000, 0.76, 0.03},
		{"token bucket 1/300ms", 500, 0.75, 0.045},
	} {
		r, ok := findSmallQuotaRow(c.name, c.tasks)
		if !ok {
			t.Fatalf("no row %q of %d tasks in smallQuotaRows", c.name, c.tasks)
		}
		eff, refused := runSmallQuota(t, r)
		t.Logf("%s, %d tasks: efficiency %.3f, refused %d", r.name, r.tasks, eff, refused)
		if eff < c.minEff || float64(refused) > c.maxRefused*float64(r.tasks) {
			t.Errorf("%s, %d tasks: efficiency %.3f, %d refused; want %.2f at least and %.1f%% refused at most",
				r.name, r.tasks, eff, refused, c.minEff, 100*c.maxRefused)
		}
	}
}

// findSmallQuotaRow returns the row of smallQuotaRows with that name and
// number of tasks: found by what it is, a row asserted stays the one meant
// when the table grows or is reordered.
func findSmallQuotaRow(name string, tasks int) (smallQuotaRow, bool) {
	for _, r := range smallQuotaRows() {
		if r.name == name && r.tasks == tasks {
			return r, true
		}
	}
	return smallQuotaRow{}, false
}

// A fixed window of one request per 10 s that states nothing, 4 callers
// looping for an hour: the server takes 270 requests in minutes 15 to 60.
// A refused rate step of a learned quota of one request is pinned when it
// leaves a quarter of the window or less to try: a fixed window passes a
// step that adds less than a request a window for several windows, until
// two starts fall in one. Left to go half way from 10.16 s to 8.46 s, the
// step to 9.31 s held its one-window trial, was refused off trial two
// minutes later, and the cut that followed held the key at one per 12.41
// s for good: 216 and 239 accepted, at 5 and 20 ms of latency.
func TestLearnedQuotaOfOneFixedWindowHolds(t *testing.T) {
	for _, latency := range []time.Duration{5 * time.Millisecond, 20 * time.Millisecond} {
		t.Run(latency.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				srv := ratelimittest.NewHandler(ratelimittest.Config{
					Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 1, Window: 10 * time.Second}},
					Dialect:  ratelimittest.Bare429,
					Latency:  latency,
				})
				start := time.Now()
				var ok, refused atomic.Int64
				h := switched(start, srv, srv, 0, 15*time.Minute, time.Hour, &ok, &refused)
				loopUntil(&http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}}, 4, start.Add(time.Hour))
				t.Logf("minutes 15 to 60: %d accepted of 270, %d refused", ok.Load(), refused.Load())
				if ok.Load() < 250 {
					t.Errorf("minutes 15 to 60: %d accepted of the 270 the server takes, want 250 at least", ok.Load())
				}
			})
		})
	}
}
