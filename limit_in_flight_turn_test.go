package polite_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A server that limits the requests in flight to four and states nothing,
// answering in 100 ms, with 16 workers and a MaxWait of a minute: no
// request waits out its MaxWait while the server serves the others. The
// slot an answer freed went to the request its own worker sent next,
// which asks before the requests the answer woke have run (under one P,
// always): over 20 runs, every run lost tasks to a *WaitError, 60 to 73
// of 200,000. A request held a refusal floor for a slot now takes its
// place in line, and the slot freed is handed off to the one held longest
// (see control's handoff.go). (At 2 s a request, TestLimitInFlightTable's
// last row, every run lost tasks too, and none does now but for the runs
// whose first refusal was read as a rate's, a mode of its own, DESIGN.md
// §6, which TestLimitInFlightLearnedSlowAnswers asserts.)
func TestLimitInFlightHeldServedInTurn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if run := runInFlight(t, inFlightRow{4, 100 * time.Millisecond, 16, 10000, time.Minute}); run.failed != 0 {
		t.Errorf("%d tasks of 10,000 failed (%d refused by the server); want every task served", run.failed, run.refused)
	}
}

// A Budget's MaxConcurrency of four shared by many workers, each request
// with a deadline of 3 s: no request outlives its deadline. The slot an
// answer freed went to the request its worker sent next: with 64 workers
// answered in 30 to 52 ms (four slots serve them in about 640 ms), 35
// and 148 of some 2,100 requests of 20 s waited out their deadlines in two
// runs; with 48 workers answered in 100 ms, whose four slots free at one
// instant, 144 of 975. A request held a refusal floor for a slot now
// takes its place in line, and each slot freed is handed off to the
// request held longest (see control's handoff.go).
func TestBudgetConcurrencyHeldServedInTurn(t *testing.T) {
	for _, c := range []struct {
		name    string
		workers int
		latency func(n int64) time.Duration
	}{
		{"answers apart", 64, func(n int64) time.Duration { return 30*time.Millisecond + time.Duration(n*7%23)*time.Millisecond }},
		{"answers together", 48, func(int64) time.Duration { return 100 * time.Millisecond }},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				var n atomic.Int64
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					time.Sleep(c.latency(n.Add(1)))
					return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}, Request: r}, nil
				})
				client := &http.Client{Transport: &polite.Transport{Budget: &polite.Budget{MaxConcurrency: 4}, Base: base}}
				stop := time.Now().Add(20 * time.Second)
				var served, failed atomic.Int64
				var wg sync.WaitGroup
				for range c.workers {
					wg.Go(func() {
						for time.Now().Before(stop) {
							ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
							req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
							resp, err := client.Do(req)
							if err != nil {
								failed.Add(1)
							} else {
								io.Copy(io.Discard, resp.Body)
								resp.Body.Close()
								served.Add(1)
							}
							cancel()
						}
					})
				}
				wg.Wait()
				if failed.Load() != 0 {
					t.Errorf("%d requests outlived their deadline of 3 s (%d served); want none", failed.Load(), served.Load())
				}
			})
		})
	}
}

// The same limit answering in 2 s, its first refusal read as a rate's
// (DESIGN.md §6, "Refusals of no rate"): the learned quota ran in bursts
// behind a lone probe each window, and at the even pace it tried after a
// burst refused, its first start went beside the burst still in flight and
// was refused by the limit, not the rate; back in bursts, both steps of
// growth refused, the key ran at 0.77 requests a second where the server
// serves 2, and tasks waited out their MaxWait. In 100 runs, 9 to 12 fell
// under 0.6 of ideal, losing 281 to 384 tasks. The even pace on trial now
// waits for the requests in flight to drain to its own level, and a
// learned window at the even pace begins with no lone probe when the key
// answers slower than the pace's spacing. Over 24 runs (twice the
// scenario table's count, so that the tree before passes in one
// invocation of ten), no run under 0.6 and no task lost.
func TestLimitInFlightLearnedSlowAnswers(t *testing.T) {
	worst := 1.0
	for i := range 24 {
		run := runInFlight(t, inFlightRow{4, 2 * time.Second, 16, 1000, time.Minute})
		worst = min(worst, run.eff)
		if run.failed != 0 || run.eff < 0.6 {
			t.Errorf("run %d: %.3f of ideal, %d tasks of 1,000 failed (%d refused by the server); want 0.6 at least, every task served", i, run.eff, run.failed, run.refused)
		}
	}
	t.Logf("worst of 24: %.3f of ideal", worst)
}

// Two in flight answering in 20 ms (100 a second), stating nothing: the
// server frees a slot once its answer is sent, so the request sent at once
// after an answer may be refused with one other in flight by the client's
// count, as many as accepted requests had. Read as a rate's, the key
// learned 14 per 1.2 s or 15 per 240 ms, its steps were refused by the
// limit and pinned, and the run ended at 0.12 to 0.5 of ideal: 43 of
// 2,000 runs under 0.6 (DESIGN.md §6, "Refusals of no rate"). Tried as a
// refusal of no rate, its probe decides, and a refusal after the lift
// with as many in flight no longer undoes it. A first refusal of a
// request sent with fewer in flight than accepted requests had (every
// answer read, no slot yet freed) is still read as a rate's, 1 run in
// 3,000 here (0.12), which no count in flight tells from a bucket's: so
// at most two of 100 runs may fall under 0.45 (the tree before failed 11
// invocations of 12, this one none of 30). Under
// the race detector goroutines run in another order, in which that
// refusal is common: 18 runs of 400 under 0.3, against 83 before.
func TestLimitInFlightFastAnswersFirstRefusal(t *testing.T) {
	if raceEnabled {
		t.Skip("goroutines run in another order under the race detector, where a request sent with fewer in flight is refused often (see the comment): run without it")
	}
	worst, low := 1.0, 0
	for i := range 100 {
		run := runInFlight(t, inFlightRow{2, 20 * time.Millisecond, 16, 300, 0})
		worst = min(worst, run.eff)
		if run.failed != 0 {
			t.Errorf("run %d: %d tasks of 300 failed (%d refused by the server); want every task served", i, run.failed, run.refused)
		}
		if run.eff < 0.45 {
			low++
			t.Logf("run %d: %.3f of ideal (%d refused by the server)", i, run.eff, run.refused)
		}
	}
	if low > 2 {
		t.Errorf("%d runs of 100 under 0.45 of ideal; want 2 at most", low)
	}
	t.Logf("worst of 100: %.3f of ideal", worst)
}
