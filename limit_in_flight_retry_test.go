package polite_test

import (
	"runtime"
	"testing"
	"time"
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
	for range runs {
		// The table's row (see TestLimitInFlightTable).
		if run := runInFlight(t, inFlightRow{4, 100 * time.Millisecond, 16, 1000, 0}); run.failed != 0 {
			t.Errorf("%d tasks of 1,000 failed (%d refused by the server); want every task served", run.failed, run.refused)
		}
	}
}
