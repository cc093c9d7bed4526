package polite_test

import (
	"errors"
	"flag"
	"io"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

var (
	inFlightRuns  = flag.Int("inflightruns", 0, "runs of each row of the limit-in-flight table (0: skip): servers that limit the requests in flight and state nothing; efficiency, refusals and tasks failed")
	inFlightProcs = flag.Int("inflightprocs", 0, "with -inflightruns, GOMAXPROCS for the runs (0: as it is); which request takes a freed slot depends on the order goroutines run in")
)

// inFlightRow is a server that limits the requests in flight to quota
// and states nothing (bare 429s), answering in latency, driven by workers
// over tasks; maxWait is the Transport's MaxWait (0: its default).
type inFlightRow struct {
	quota   int64
	latency time.Duration
	workers int
	tasks   int
	maxWait time.Duration
}

// TestLimitInFlightTable prints, for each row, over -inflightruns runs:
// the efficiency (ideal over polite's time: least, tenth, median, most),
// the runs under 0.6 of ideal (a limit in flight read as a rate: see
// DESIGN.md §6), the requests the server refused (least, median, most),
// the longest a task took (median and most of the runs), and the runs in
// which a task failed, with how many failed (a status other than 200, or
// an error: a *WaitError past MaxWait). DESIGN.md §6 ("Refusals of no
// rate") quotes it. It asserts nothing.
//
//	go test -run 'TestLimitInFlightTable$' -inflightruns 100 -v .
//	go test -run 'TestLimitInFlightTable$' -inflightruns 20 -inflightprocs 1 -v .
func TestLimitInFlightTable(t *testing.T) {
	if *inFlightRuns <= 0 {
		t.Skip("run with -inflightruns N")
	}
	if *inFlightProcs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*inFlightProcs))
	}
	ms := time.Millisecond
	for _, r := range []inFlightRow{
		{4, 100 * ms, 16, 200, 0},
		{4, 100 * ms, 100, 200, 0},
		{4, 100 * ms, 16, 1000, 0},
		{4, 100 * ms, 100, 1000, 0},
		{8, 50 * ms, 16, 500, 0},
		{2, 20 * ms, 16, 300, 0},
		{4, 100 * ms, 16, 10000, time.Minute},
		{4, 2 * time.Second, 16, 1000, time.Minute},
	} {
		var effs []float64
		var refused []int
		var longest []time.Duration
		runsFailed, failed, low := 0, 0, 0
		for range *inFlightRuns {
			run := runInFlight(t, r)
			effs, refused, longest = append(effs, run.eff), append(refused, run.refused), append(longest, run.longest)
			if run.failed > 0 {
				runsFailed++
				failed += run.failed
			}
			if run.eff < 0.6 {
				low++
			}
		}
		slices.Sort(effs)
		slices.Sort(refused)
		slices.Sort(longest)
		n := len(effs)
		t.Logf("limit %d in flight, %v, %3d workers, %5d tasks, MaxWait %v: efficiency %.3f / %.3f / %.3f / %.3f, %d runs under 0.6, refused %d / %d / %d, longest task %v / %v, %d runs of %d with %d tasks failed",
			r.quota, r.latency, r.workers, r.tasks, r.maxWait, effs[0], effs[n/10], effs[n/2], effs[n-1], low, refused[0], refused[n/2], refused[n-1], longest[n/2], longest[n-1], runsFailed, n, failed)
	}
}

// inFlightRun is what one run of an inFlightRow came to.
type inFlightRun struct {
	eff     float64       // ideal over the run's time
	refused int           // requests the server refused
	failed  int           // tasks that failed
	longest time.Duration // the longest a task took, its retries and waits included
}

// runInFlight runs r once in a synctest bubble.
func runInFlight(t *testing.T, r inFlightRow) (run inFlightRun) {
	cfg := ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.Concurrency, Quota: r.quota}},
		Dialect:  ratelimittest.Bare429,
		Latency:  r.latency,
	}
	synctest.Test(t, func(t *testing.T) {
		present()
		h := ratelimittest.NewHandler(cfg)
		c := &http.Client{Transport: &polite.Transport{MaxWait: r.maxWait, Base: &ratelimittest.Transport{Handler: h}}}
		var next, bad, longest atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range r.workers {
			wg.Go(func() {
				for next.Add(1) <= int64(r.tasks) {
					began := time.Now()
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
					resp, err := c.Do(req)
					for d := int64(time.Since(began)); ; {
						if m := longest.Load(); d <= m || longest.CompareAndSwap(m, d) {
							break
						}
					}
					if err != nil {
						if we := (*polite.WaitError)(nil); !errors.As(err, &we) {
							t.Errorf("Do: %v", err)
						}
						bad.Add(1)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						bad.Add(1)
					}
				}
			})
		}
		wg.Wait()
		run.eff = ratelimittest.Ideal(cfg, r.tasks, r.workers).Seconds() / time.Since(start).Seconds()
		run.refused, run.failed, run.longest = h.Stats().Refused, int(bad.Load()), time.Duration(longest.Load())
	})
	return run
}
