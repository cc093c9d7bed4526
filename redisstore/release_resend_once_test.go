package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// timeoutErr is a client's timeout, as a lost reply reads.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// lossHook makes the next script call the test arms end in a timeout,
// after running it (ran) or without sending it, and runs between first
// (another process's writes, say).
type lossHook struct {
	armed   atomic.Bool
	ran     bool
	between func()
}

func (h *lossHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *lossHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *lossHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		n := strings.ToLower(cmd.Name())
		if (n != "evalsha" && n != "eval") || !h.armed.CompareAndSwap(true, false) {
			return next(ctx, cmd)
		}
		if h.ran {
			if err := next(ctx, cmd); err != nil {
				return err
			}
		}
		h.between()
		cmd.SetErr(timeoutErr{})
		return timeoutErr{}
	}
}

// A release whose reply is lost (a timeout) is sent again under its
// number, and applied once: its first send ran, and the key holds its
// number however many writes other stores made since (33 push its token
// out of the key's last 32); or its first send never reached Redis, and it
// goes again on the key as it is. Only when its own store's later writes
// to the key pushed out a number at or above its own (the key keeps a
// store's last 32) does the key not know: it is not
// run again (run twice, a release frees another request's slot), and the
// release reports it may not have been kept; its lease, if it never ran,
// stays until it ends.
func TestReleaseResentOnce(t *testing.T) {
	for _, c := range []struct {
		name    string
		ran     bool // the first send ran, its reply lost
		writes  int  // another process's, before the resend
		own     int  // releases of the same store, before the resend
		wantErr bool // the release reports it may not have been kept
		runs    int  // times the release's function runs: once more when the swap goes unanswered (see releases)
		left    int64
	}{
		{"ran, 5 writes since", true, 5, 0, false, 2, 0},
		{"ran, 33 writes since", true, 33, 0, false, 2, 0},
		{"ran, 31 own since", true, 0, 31, false, 2, 0},
		{"ran, 32 own since", true, 0, 32, true, 2, 0},
		{"never sent, 5 writes since", false, 5, 0, false, 3, 0},
		{"never sent, 33 writes since", false, 33, 0, false, 3, 0},
		{"never sent, 32 own since", false, 0, 32, false, 3, 0},
		{"never sent, 33 own since", false, 0, 33, true, 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := redisAddr(t)
			prefix := testPrefix(t)
			rdbA := newClient(t, addr)
			h := &lossHook{ran: c.ran}
			rdbA.AddHook(h)
			a := newStore(t, rdbA, prefix)
			b := newStore(t, newClient(t, addr), prefix)
			// own writes as a's name, its numbers past a's: another
			// queue of the same store.
			own := newStore(t, newClient(t, addr), prefix)
			own.name = a.name
			own.releases.Store(1 << 20)
			own.writes.Store(1 << 20) // its tokens too
			const k = "k"
			cfg := &control.Config{MaxConcurrency: 10, Lease: 10 * time.Minute}
			var l control.Lease // taken by the release's store, which holds the key's state
			if err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
				edit(t, ks, func(s *control.State) { s.Acquire(time.Now(), cfg, control.Ask{}, &l) })
			}); err != nil {
				t.Fatal(err)
			}
			h.between = func() {
				for range c.writes {
					if err := b.Update(context.Background(), k, func(ks *polite.KeyState) {
						edit(t, ks, func(s *control.State) { s.NextGeneration() })
					}); err != nil {
						t.Error(err)
					}
				}
				for range c.own {
					if err := own.Update(context.Background(), k, func(ks *polite.KeyState) {
						edit(t, ks, func(s *control.State) { s.NextGeneration() })
					}); err != nil {
						t.Error(err)
					}
				}
			}
			var mu sync.Mutex
			runs := 0
			h.armed.Store(true)
			err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
				edit(t, ks, func(s *control.State) {
					mu.Lock()
					runs++
					mu.Unlock()
					s.Release(time.Now(), cfg, &l, &control.Outcome{Bytes: -1})
				})
			})
			if (err != nil) != c.wantErr || runs != c.runs {
				t.Errorf("release: %v, its function run %d times; want an error %v, %d runs", err, runs, c.wantErr, c.runs)
			}
			var left int64
			if err := b.Update(t.Context(), k, func(ks *polite.KeyState) {
				edit(t, ks, func(s *control.State) { left = s.Leases() })
			}); err != nil {
				t.Fatal(err)
			}
			if left != c.left {
				t.Errorf("%d leases left in Redis; want %d", left, c.left)
			}
		})
	}
}

// A release Redis answers with an error, or whose client is closed, is not
// sent again: Redis answered, or cannot be asked.
func TestReleaseNotResentOnError(t *testing.T) {
	addr := redisAddr(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	s := newStore(t, rdb, testPrefix(t))
	const k = "k"
	var l control.Lease
	if ok, err := acquire(t, s, k, &l); err != nil || !ok {
		t.Fatal(ok, err)
	}
	rdb.Close()
	start := time.Now()
	err := release(t, s, k, &l)
	if took := time.Since(start); err == nil || took > time.Second {
		t.Errorf("a release with its client closed: %v after %v; want its error at once", err, took.Round(time.Millisecond))
	}
	if !errors.Is(err, redis.ErrClosed) {
		t.Logf("error: %v", err)
	}
}
