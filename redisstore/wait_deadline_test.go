package redisstore

import (
	"context"
	"testing"
	"time"
)

// pastDeadlineContext reports a deadline that has passed while its Done
// closes only when the test cancels it (a context that reports a
// deadline over one that is never cancelled does so for ever).
type pastDeadlineContext struct {
	context.Context
	deadline time.Time
}

func (c pastDeadlineContext) Deadline() (time.Time, bool) { return c.deadline, true }

// Wait's read of a key it has not seen, failing with the context's
// deadline passed, blocked on <-ctx.Done() with no bound: a context whose
// Done does not close at the deadline it reports kept Wait blocked (and
// Wait's other cases look at Done only).
func TestWaitAtPassedDeadlineDoesNotHang(t *testing.T) {
	rs := startServer(t)
	a := New(ownClient(t, rs.addr()), testPrefix(t))
	t.Cleanup(func() { a.Close() })
	waitSubscribed(t, a)

	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := pastDeadlineContext{cctx, time.Now().Add(-time.Millisecond)}
	done := make(chan error, 1)
	go func() { done <- a.Wait(ctx, "never-seen", 0, time.Time{}) }()
	guard := time.NewTimer(3 * time.Second) // a bound for the failure only
	defer guard.Stop()
	select {
	case <-done:
	case <-guard.C:
		t.Errorf("Wait still blocked 3s after the deadline its context reports had passed (<-ctx.Done() after a failed read)")
		cancel()
		<-done
	}
}
