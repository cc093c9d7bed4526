package redisstore

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// polite.Store: Wait "returns nil in the first two cases, ctx.Err() in the
// last". Wait's read of a key it had not seen, failing at the context's
// deadline a moment before the context said so, returned
// context.DeadlineExceeded while ctx.Err() was still nil. The Budget
// (Budget.wait) takes an error with ctx.Err() == nil for the Store's
// failure: EventStoreDown, a second in the fallback, where requests in
// flight in the Store are not counted against MaxConcurrency.
func TestWaitErrorIsCtxErr(t *testing.T) {
	rs := startServer(t)
	prefix := testPrefix(t)
	admin := ownClient(t, rs.addr())
	a := New(ownClient(t, rs.addr()), prefix)
	t.Cleanup(func() { a.Close() })
	waitSubscribed(t, a)
	if err := admin.Do(t.Context(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "CLIENT", "UNPAUSE") })
	go a.Update(context.Background(), "busy", func(st *polite.KeyState) { bump(t, st) })
	time.Sleep(10 * time.Millisecond)
	bad := 0
	for i := range 20 {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		err := a.Wait(ctx, "k"+strconv.Itoa(i), 0, time.Time{})
		cerr := ctx.Err() // as Budget.wait looks, right after Wait returns
		cancel()
		if err != nil && cerr == nil {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of 20 Waits returned an error (context.DeadlineExceeded) while ctx.Err() was still nil: the Budget reports EventStoreDown and falls back", bad)
	}
}

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
