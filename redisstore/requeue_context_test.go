package redisstore

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// An update whose context ends while a batch's split has it out of the
// queue (its fn running in the leader's goroutine, slow here, as a GC
// pause or a large batch makes it) cannot withdraw, and its goroutine
// waits for its result, deaf to its context. Put back in the queue, it
// waited through the leader's whole commit, a second under another
// process's contention, where its context had 60 ms, then led and sent
// its swap. Now it ends with its context's error as it is put back.
func TestRequeuedUpdateEndsWithContext(t *testing.T) {
	addr := redisAddr(t)
	rdb := ownClient(t, addr)
	a := newStore(t, rdb, testPrefix(t)) // Timeout 250ms
	cfg := &control.Config{MaxConcurrency: 2, Lease: 10 * time.Minute}
	const k = "k"
	upd := func(ctx context.Context, f func(*control.State)) error {
		return a.Update(ctx, k, func(ks *polite.KeyState) { splitEdit(t, ks, f) })
	}
	var p control.Lease
	if err := upd(t.Context(), func(c *control.State) { c.Acquire(time.Now(), cfg, control.Ask{}, &p) }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(210 * time.Millisecond)
	if err := upd(t.Context(), func(c *control.State) { c.Release(time.Now(), cfg, &p, &control.Outcome{First: true, Bytes: -1}) }); err != nil {
		t.Fatal(err)
	}
	var l0 control.Lease
	if err := upd(t.Context(), func(c *control.State) { c.Acquire(time.Now(), cfg, control.Ask{}, &l0) }); err != nil {
		t.Fatal(err)
	}

	// Another process's contention, from the moment the batch is split.
	rkey := a.redisKey(id(k))
	stop, stopped := make(chan struct{}), make(chan struct{})
	var contend sync.Once
	startContention := func() {
		contend.Do(func() {
			go func() {
				defer close(stopped)
				for {
					select {
					case <-stop:
						return
					default:
					}
					if now, err := rdb.Time(context.Background()).Result(); err == nil {
						rdb.HSet(context.Background(), rkey, "q", "0123456789abcdef", "qt", strconv.FormatInt(now.Add(15*time.Millisecond).UnixMicro(), 10))
					}
					time.Sleep(time.Millisecond)
				}
			}()
		})
	}

	open, waitQueued := plug(t, a, k)

	// R: a request ends (context detached, as the Budget's releases are).
	rDone := make(chan error, 1)
	go func() {
		rDone <- upd(context.Background(), func(c *control.State) { c.Release(time.Now(), cfg, &l0, &control.Outcome{Bytes: -1}) })
	}()
	waitQueued(1)
	// A: a request starts, with 60ms left of its context; its fn is
	// slow the first time it runs (a GC pause, a descheduled goroutine).
	actx, cancel := context.WithTimeout(t.Context(), 60*time.Millisecond)
	defer cancel()
	var slow sync.Once
	type res struct {
		err  error
		took time.Duration
	}
	aDone := make(chan res, 1)
	start := time.Now()
	go func() {
		err := upd(actx, func(c *control.State) {
			var l control.Lease
			c.Acquire(time.Now(), cfg, control.Ask{}, &l)
			slow.Do(func() {
				startContention()
				time.Sleep(100 * time.Millisecond)
			})
		})
		aDone <- res{err, time.Since(start)}
	}()
	waitQueued(2)
	open()
	r := <-aDone
	close(stop)
	<-stopped
	rerr := <-rDone
	t.Logf("A (context of 60ms) returned after %v: %v; R: %v", r.took.Round(time.Millisecond), r.err, rerr)
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Errorf("A: %v, want its context's error", r.err)
	}
	if bound := 60*time.Millisecond + 100*time.Millisecond + a.timeout(); r.took > bound {
		t.Errorf("A returned %v after its Update began, its context of 60ms long ended; want within a Timeout (%v) of its end or of its fn's", r.took.Round(time.Millisecond), a.timeout())
	}
}
