package polite_test

import (
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// A server that limits the requests in flight to four and states nothing
// (nginx's limit_conn), over 1,000 tasks: every task is served. The key
// holds its window to the limit and grows it past now and then, and each
// step past costs a refusal; a retry keeps its place in line, so the
// request waiting longest, a retry, took each step and was refused at
// every one, until its attempts were spent while the server took the
// others. Which request takes a step depends on the order goroutines run
// in at one instant of the bubble: a task failed in 5 of 100 runs under
// one P, 1 of 100 under four (16 workers). The test runs under one P,
// and control.TestShedRetryHeldFromEdge is the rule's exact test. A retry
// now goes within the window that held (see
// control.State.retryHeldFromEdge).
func TestLimitInFlightRetriesServed(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 3
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	cfg := ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.Concurrency, Quota: 4}},
		Dialect:  ratelimittest.Bare429,
		Latency:  100 * time.Millisecond,
	}
	for range runs {
		synctest.Test(t, func(t *testing.T) {
			present()
			h := ratelimittest.NewHandler(cfg)
			c, _ := politeOver(h)
			statuses, _ := runLongest(t, c, "http://api.test/", 1000, 16)
			if statuses[200] != 1000 {
				t.Errorf("statuses %v (%d refused by the server); want every task served", statuses, h.Stats().Refused)
			}
		})
	}
}
