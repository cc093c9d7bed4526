package polite_test

import (
	"runtime"
	"testing"
	"time"
)

// A server that limits the requests in flight to four and states nothing,
// with 16 workers and a MaxWait of a minute: no request waits out its
// MaxWait while the server serves the others. The slot an answer freed
// went to the request its own worker sent next, which asks before the
// requests the answer woke have run (under one P, always). Over 20 runs
// of each row, every run lost tasks to a *WaitError: 60 of 200,000 at
// 100 ms a request, 1,575 of 20,000 at 2 s. A request held a refusal
// floor for a slot now takes its place, and the slot freed is handed off
// to the one held longest (see control's handoff.go).
func TestLimitInFlightHeldServedInTurn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, r := range []inFlightRow{
		{4, 100 * time.Millisecond, 16, 10000, time.Minute},
		{4, 2 * time.Second, 16, 1000, time.Minute},
	} {
		if _, refused, failed := runInFlight(t, r); failed != 0 {
			t.Errorf("%v a request, %d tasks: %d failed (%d refused by the server); want every task served", r.latency, r.tasks, failed, refused)
		}
	}
}
