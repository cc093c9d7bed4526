package redisstore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// seqHook runs f for each script call (its 1-based index among script
// calls), in place of the call: f calls next itself, or not.
type seqHook struct {
	n atomic.Int64
	f func(i int64, ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error
}

func (h *seqHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *seqHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *seqHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		n := strings.ToLower(cmd.Name())
		if (n != "evalsha" && n != "eval") || h.f == nil {
			return next(ctx, cmd)
		}
		return h.f(h.n.Add(1), ctx, cmd, next)
	}
}

// The batch's leader is not a release (an Inspect, a refused Acquire),
// and a release queued behind it makes the batch's swap one: Redis paused,
// the leader returns the swap's failure at once, and only the release is
// sent again. Held by the resend, it returned when Redis answered, 3 s
// on, past its context of 600 ms.
func TestResendLeaderNotReleaseReturns(t *testing.T) {
	waitsSeconds(t)
	_, rdb, s, cfg, l := oneLease(t) // Timeout 250 ms
	const k = "k"
	open, waitQueued := plug(t, s, k)
	short, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	leader := make(chan error, 1)
	start := time.Now()
	go func() {
		leader <- s.Update(short, k, func(ks *polite.KeyState) {
			splitEdit(t, ks, func(c *control.State) { _ = c.Leases() }) // reads only
		})
	}()
	waitQueued(1)
	member := goRelease(t, s, k, cfg, l)
	waitQueued(2)
	if err := rdb.Do(t.Context(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	defer rdb.Do(context.Background(), "CLIENT", "UNPAUSE")
	open()
	err := <-leader
	took := time.Since(start)
	t.Logf("read-only leader (600 ms context): %v after %v", err, took.Round(time.Millisecond))
	if took > 1200*time.Millisecond {
		t.Errorf("a read-only update with a 600 ms context returned after %v", took.Round(time.Millisecond))
	}
	if err := <-member; err != nil {
		t.Errorf("the release behind it, sent again until Redis answered: %v", err)
	}
}

// A release of a batch sent again, its update run again once the resend
// was told the key changed, leaves as its context ends, though Redis then
// stops answering: it waited until Redis answered, 3 s on, past its
// context of 1 s.
func TestResendRerunMemberLeaves(t *testing.T) {
	waitsSeconds(t)
	x := twoReleases(t)
	rs, a, b, h, cfg, l2, open, waitQueued, leader := x.rs, x.a, x.b, x.h, x.cfg, &x.l2, x.open, x.waitQueued, x.leader
	admin := ownClient(t, rs.addr())
	const k = "k"
	memberCtx, cancel := context.WithTimeout(context.Background(), 1*time.Second)
	defer cancel()
	member := make(chan error, 1)
	start := time.Now()
	go func() {
		member <- a.Update(memberCtx, k, func(ks *polite.KeyState) {
			splitEdit(t, ks, func(c *control.State) { c.Release(time.Now(), cfg, l2, &control.Outcome{Bytes: -1}) })
		})
	}()
	waitQueued(2)
	h.f = func(i int64, ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		switch i {
		case 1: // the plug's check
		case 2: // the batch's first send: lost before Redis; another process writes
			if err := b.Update(context.Background(), k, func(ks *polite.KeyState) { bump(t, ks) }); err != nil {
				t.Error(err)
			}
			cmd.SetErr(timeoutErr{})
			return timeoutErr{}
		case 3: // the resend, told stale: then Redis pauses for 3 s
			err := next(ctx, cmd)
			if err := admin.Do(context.Background(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
				t.Error(err)
			}
			return err
		}
		return next(ctx, cmd)
	}
	open()
	err := <-member
	took := time.Since(start)
	t.Logf("member (1 s context): %v after %v", err, took.Round(time.Millisecond))
	if took > 1500*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a member with a 1 s context returned %v after %v; want its deadline's error within 1.5 s", err, took.Round(time.Millisecond))
	}
	t.Logf("leader release: %v", <-leader)
}

// An Acquire refused in the first send (the key paused) and batched with
// a release fails with the swap: the resend runs again only the release.
// Run again on the key as another process left it (the pause forgotten),
// the Acquire was granted there, in a swap sent with no limit; Redis busy
// and the Store closed, the Acquire failed while Redis ran the swap late,
// and its lease stayed, no request to end it.
func TestResendTakesNoLease(t *testing.T) {
	waitsSeconds(t)
	rs := startServer(t)
	rdbA := ownClient(t, rs.addr())
	h := &seqHook{}
	rdbA.AddHook(h)
	prefix := testPrefix(t)
	a := New(rdbA, prefix)
	b := newStore(t, ownClient(t, rs.addr()), prefix)
	const k = "k"
	cfg := &control.Config{MaxConcurrency: 1, Lease: 10 * time.Minute}
	probed(t, a, k)
	var l control.Lease
	if err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(c *control.State) {
			c.Acquire(time.Now(), cfg, control.Ask{}, &l)
			c.PauseUntil(time.Now(), cfg, time.Now().Add(time.Minute), control.ReasonNone)
		})
	}); err != nil {
		t.Fatal(err)
	}
	var grantsBefore uint64
	if err := b.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(c *control.State) { grantsBefore = c.Grants() })
	}); err != nil {
		t.Fatal(err)
	}
	open, waitQueued := plug(t, a, k)
	leader := goRelease(t, a, k, cfg, &l)
	waitQueued(1)
	var granted atomic.Bool
	var x control.Lease
	member := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		member <- a.Update(ctx, k, func(ks *polite.KeyState) {
			splitEdit(t, ks, func(c *control.State) {
				_, ok := c.Acquire(time.Now(), cfg, control.Ask{}, &x)
				granted.Store(ok)
			})
		})
	}()
	waitQueued(2)
	var mu sync.Mutex
	var by4 string
	h.f = func(i int64, ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		switch i {
		case 1:
		case 2:
			if granted.Load() {
				t.Error("the acquire was granted in the first send")
			}
			if err := b.Update(context.Background(), k, func(ks *polite.KeyState) {
				edit(t, ks, func(c *control.State) { c.Forget(time.Now(), cfg) })
			}); err != nil {
				t.Error(err)
			}
			cmd.SetErr(timeoutErr{})
			return timeoutErr{}
		case 3: // told stale
		case 4: // the rebuilt swap: Redis busy for 1.5 s, the Store closed meanwhile
			args := cmd.Args()
			mu.Lock()
			by4 = fmt.Sprint(args[len(args)-4]) // ARGV[13]
			mu.Unlock()
			busyRedis(t, rs.addr(), 1500*time.Millisecond)
			go func() { time.Sleep(50 * time.Millisecond); a.Close() }()
		}
		return next(ctx, cmd)
	}
	open()
	merr := <-member
	<-leader
	mu.Lock()
	t.Logf("acquire: granted in a rebuild %v; Update: %v; a rebuilt swap's limit (ARGV[13]) %q", granted.Load(), merr, by4)
	mu.Unlock()
	time.Sleep(2 * time.Second) // Redis runs what it queued
	var leases int64
	var grants uint64
	var lx control.Lease
	var ok bool
	if err := b.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(c *control.State) {
			leases, grants = c.Leases(), c.Grants()
			_, ok = c.Acquire(time.Now(), cfg, control.Ask{}, &lx)
		})
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("grants before the batch %d; in Redis after: leases %d, grants %d; another process's acquire granted: %v", grantsBefore, leases, grants, ok)
	if merr != nil && leases > 0 {
		t.Errorf("the acquire failed (%v), and a lease is held in Redis (%d): the key's one slot is taken for its Lease", merr, leases)
	}
}

// A drop mark no store writes (an instant in the future) is read as one
// made now, and lapses a minute on: kept by every write, it made every
// release sent again on the key unknown for good.
func TestFutureDropMarkLapses(t *testing.T) {
	rdb, a, rkey := bumpedKey(t)
	ctx := t.Context()
	if err := rdb.HSet(ctx, rkey, "r", "~:99999999999").Err(); err != nil {
		t.Fatal(err)
	}
	for i, again := range []bool{false, true} {
		v, _ := rdb.HGet(ctx, rkey, "v").Int64()
		state, _ := rdb.HGet(ctx, rkey, "s").Bytes()
		rel := []string{"a", "b"}[i]
		r := swap{expect: v, mode: modeWrite, state: append(state, 0), ttl: time.Minute, id: id("k"), rel: rel, again: again,
			tok: a.name + "." + rel}
		res, _, _, _, err := a.swap(ctx, rkey, r)
		got, _ := rdb.HGet(ctx, rkey, "r").Result()
		if err != nil || res != swapDone || strings.Contains(got, "99999999999") {
			t.Errorf("swap %s (sent again %v): %v %v; r now %q; want it run, and the mark made now", rel, again, res, err, got)
		}
	}
}

// A release whose context ends at 600 ms, Redis paused for 3 s, returns
// then, its swap sent again apart: held until Redis answered, it
// returned past its context, which a Budget reads as the Store failing.
func TestResendReleaseKeepsItsContext(t *testing.T) {
	waitsSeconds(t)
	_, rdb, s, cfg, l := oneLease(t)
	const k = "k"
	if err := rdb.Do(t.Context(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	defer rdb.Do(context.Background(), "CLIENT", "UNPAUSE")
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.Update(ctx, k, func(ks *polite.KeyState) {
		splitEdit(t, ks, func(c *control.State) { c.Release(time.Now(), cfg, l, &control.Outcome{Bytes: -1}) })
	})
	took := time.Since(start)
	if took > 1200*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a release with a 600 ms context: %v after %v; want its deadline's error within 1.2 s", err, took.Round(time.Millisecond))
	}
}

// An update that panics when the resend runs it again, apart from its
// caller, panics in its caller's goroutine, as it would have in the key's
// queue: in the resend's own goroutine, it ended the process.
func TestResendRerunPanicReachesCaller(t *testing.T) {
	x := twoReleases(t)
	a, b, h, cfg, l2, open, waitQueued, leader := x.a, x.b, x.h, x.cfg, &x.l2, x.open, x.waitQueued, x.leader
	const k = "k"
	member := make(chan any, 1)
	go func() {
		defer func() { member <- recover() }()
		runs := 0
		a.Update(t.Context(), k, func(ks *polite.KeyState) {
			if runs++; runs == 3 { // its swap, the look at what it releases, then the resend's
				panic("the third run")
			}
			splitEdit(t, ks, func(c *control.State) { c.Release(time.Now(), cfg, l2, &control.Outcome{Bytes: -1}) })
		})
	}()
	waitQueued(2)
	h.f = func(i int64, ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if i == 2 { // the batch's first send: lost before Redis; another process writes
			if err := b.Update(context.Background(), k, func(ks *polite.KeyState) { bump(t, ks) }); err != nil {
				t.Error(err)
			}
			cmd.SetErr(timeoutErr{})
			return timeoutErr{}
		}
		return next(ctx, cmd)
	}
	open()
	if p := <-member; p != "the third run" {
		t.Errorf("the member's caller recovered %v; want its update's panic", p)
	}
	if err := <-leader; !errors.Is(err, errAbandoned) {
		t.Errorf("the leader: %v; want %v", err, errAbandoned)
	}
}

// Redis busy with a long script: past busy-reply-threshold (5 s by
// default; 1 s here) it answers every command with BUSY, which never ran
// it. The release is sent again until the script ends: taken for an error
// Redis replied, it failed, and its lease stayed in Redis until it ended.
func TestResendRedisBusy(t *testing.T) {
	waitsSeconds(t)
	rs, _, s, cfg, l := oneLease(t, "--busy-reply-threshold", "1000")
	const k = "k"
	busy := busyRedis(t, rs.addr(), 2500*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := s.Update(ctx, k, func(ks *polite.KeyState) {
		splitEdit(t, ks, func(c *control.State) { c.Release(time.Now(), cfg, l, &control.Outcome{Bytes: -1}) })
	})
	if err != nil {
		t.Errorf("release: %v after %v; want it kept once the script ends", err, time.Since(start).Round(time.Millisecond))
	}
	<-busy
	time.Sleep(100 * time.Millisecond)
	if n := leases(t, s, k); n != 0 {
		t.Errorf("%d leases held in Redis after the script; want none", n)
	}
}

// resendRerun makes a's release of k go unanswered (another store
// writing meanwhile), so that the resend is told stale and runs fn again in
// its own goroutine; onRerun is what fn does on that third call.
func resendRerun(t *testing.T, ctx context.Context, onRerun func()) (time.Duration, error) {
	rdbA := newClient(t, redisAddr(t))
	h := &seqHook{}
	rdbA.AddHook(h)
	prefix := testPrefix(t)
	a := newStore(t, rdbA, prefix)
	b := newStore(t, newClient(t, redisAddr(t)), prefix)
	const k = "k"
	cfg := &control.Config{MaxConcurrency: 10, Lease: 10 * time.Minute}
	var l control.Lease
	if err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
		splitEdit(t, ks, func(c *control.State) { c.Acquire(time.Now(), cfg, control.Ask{}, &l) })
	}); err != nil {
		t.Fatal(err)
	}
	h.n.Store(0)
	h.f = func(i int64, ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if i == 1 { // the first send: lost; another process writes
			if err := b.Update(context.Background(), k, func(ks *polite.KeyState) { bump(t, ks) }); err != nil {
				t.Error(err)
			}
			cmd.SetErr(timeoutErr{})
			return timeoutErr{}
		}
		return next(ctx, cmd)
	}
	var calls atomic.Int32
	start := time.Now()
	err := a.Update(ctx, k, func(ks *polite.KeyState) {
		if calls.Add(1) == 3 {
			onRerun()
		}
		splitEdit(t, ks, func(c *control.State) { c.Release(time.Now(), cfg, &l, &control.Outcome{Bytes: -1}) })
	})
	return time.Since(start), err
}

// An update that calls runtime.Goexit when the resend runs it again ends
// the resend's goroutine: its caller is told its update was abandoned.
// It waited for its context, for ever without one.
func TestResendRerunGoexit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	took, err := resendRerun(t, ctx, func() { runtime.Goexit() })
	if took > time.Second || !errors.Is(err, errAbandoned) {
		t.Errorf("Update: %v after %v; want %v at once", err, took.Round(time.Millisecond), errAbandoned)
	}
}

// Redis restarting (from a snapshot that holds the lease) refuses the
// release's connection, within a Timeout of 3 s: it is sent again until
// Redis is back, and frees the lease then. Taken for an error Redis
// replied, it failed at once, and the lease stayed until it ended.
func TestResendRedisRestarting(t *testing.T) {
	waitsSeconds(t)
	rs, rdb, s, cfg, l := oneLease(t)
	s.Timeout = 3 * time.Second // the client's own retries of the dial end sooner
	const k = "k"
	if err := rdb.Save(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	rs.stop()
	done := goRelease(t, s, k, cfg, l)
	time.Sleep(4 * time.Second)
	rs.start()
	if err := <-done; err != nil {
		t.Errorf("the release, Redis restarting: %v; want it kept once Redis is back", err)
	}
	if n := leases(t, s, k); n != 0 {
		t.Errorf("%d leases held in Redis after the restart; want none", n)
	}
}

// releases2 is a key "k" with two requests in flight, granted by store a
// (its script calls seen by h) of a Redis of the test's own, and the first
// released by an update queued behind a plug (see plug), its outcome on
// leader; b is another process's store.
type releases2 struct {
	rs         *server
	a, b       *Store
	h          *seqHook
	cfg        *control.Config
	l, l2      control.Lease
	open       func() error
	waitQueued func(n int)
	leader     chan error
}

// twoReleases returns a releases2, its leader queued.
func twoReleases(t *testing.T) *releases2 {
	x := &releases2{rs: startServer(t), h: &seqHook{}}
	rdbA := ownClient(t, x.rs.addr())
	rdbA.AddHook(x.h)
	prefix := testPrefix(t)
	x.a = newStore(t, rdbA, prefix)
	x.b = newStore(t, ownClient(t, x.rs.addr()), prefix)
	const k = "k"
	x.cfg = &control.Config{MaxConcurrency: 10, Lease: 10 * time.Minute}
	probedSlow(t, x.a, k)
	for _, l := range []*control.Lease{&x.l, &x.l2} {
		if err := x.a.Update(t.Context(), k, func(ks *polite.KeyState) {
			splitEdit(t, ks, func(c *control.State) { c.Acquire(time.Now(), x.cfg, control.Ask{}, l) })
		}); err != nil {
			t.Fatal(err)
		}
	}
	if n := leases(t, x.a, k); n != 2 {
		t.Fatalf("%d requests in flight, want 2", n)
	}
	x.open, x.waitQueued = plug(t, x.a, k)
	x.leader = goRelease(t, x.a, k, x.cfg, &x.l)
	x.waitQueued(1)
	return x
}

// goRelease releases l on s's key k in a goroutine, with a context of 10 s
// (a Budget's), its outcome on the channel returned.
func goRelease(t *testing.T, s *Store, k string, cfg *control.Config, l *control.Lease) chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- s.Update(ctx, k, func(ks *polite.KeyState) {
			splitEdit(t, ks, func(c *control.State) { c.Release(time.Now(), cfg, l, &control.Outcome{Bytes: -1}) })
		})
	}()
	return done
}

// oneLease starts a Redis of the test's own (redis-server with extra
// arguments), and returns it, a client of it, a Store on it, and a request
// of its key "k" granted by that Store under cfg.
func oneLease(t *testing.T, extra ...string) (*server, *redis.Client, *Store, *control.Config, *control.Lease) {
	rs := startServer(t, extra...)
	rdb := ownClient(t, rs.addr())
	s := newStore(t, rdb, testPrefix(t))
	cfg := &control.Config{MaxConcurrency: 10, Lease: 10 * time.Minute}
	l := new(control.Lease)
	if err := s.Update(t.Context(), "k", func(ks *polite.KeyState) {
		splitEdit(t, ks, func(c *control.State) { c.Acquire(time.Now(), cfg, control.Ask{}, l) })
	}); err != nil {
		t.Fatal(err)
	}
	return rs, rdb, s, cfg, l
}
