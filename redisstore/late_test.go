package redisstore

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// Swaps Redis runs late: busy with something else (a slow command, a
// script, a fork) for longer than the Store's Timeout, it runs a swap
// after the Store gave up on it.

// busyRedis keeps the Redis at addr busy for d, from a connection of its
// own, and returns a channel receiving the script's error when it ends.
func busyRedis(t *testing.T, addr string, d time.Duration) <-chan error {
	t.Helper()
	admin := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { admin.Close() })
	if err := admin.Ping(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	busy := make(chan error, 1)
	go func() {
		busy <- admin.Eval(context.Background(), `
local t = redis.call('TIME')
local t0 = t[1] * 1000000 + t[2]
repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] > t0 + tonumber(ARGV[1])
return 1`, nil, d.Microseconds()).Err()
	}()
	time.Sleep(50 * time.Millisecond) // the script runs
	return busy
}

// lateCfg is the Budget's config of the tests: one request at a time, and
// a lease of ten minutes, which a lease left in Redis holds the key for.
var lateCfg = &control.Config{MaxConcurrency: 1, Lease: 10 * time.Minute}

// acquire takes a lease of k in a, as a request does; it reports whether
// it was granted, and the error of the Update.
func acquire(t *testing.T, a *Store, k string, l *control.Lease) (bool, error) {
	granted := false
	err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { _, granted = s.Acquire(time.Now(), lateCfg, control.Ask{}, l) })
	})
	return granted, err
}

// release ends the lease l of k in a, as a request's end does.
func release(t *testing.T, a *Store, k string, l *control.Lease) error {
	return a.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { s.Release(time.Now(), lateCfg, l, &control.Outcome{Bytes: -1}) })
	})
}

// probed makes a request of k come and go: the key's probe, after which
// requests are paced by lateCfg alone.
func probed(t *testing.T, a *Store, k string) {
	t.Helper()
	var l control.Lease
	if ok, err := acquire(t, a, k, &l); err != nil || !ok {
		t.Fatalf("the first request of %s: granted %v, %v", k, ok, err)
	}
	if err := release(t, a, k, &l); err != nil {
		t.Fatal(err)
	}
}

// free reports whether a request of k may start in b, a Store of another
// process, and if not why and for how long.
func free(t *testing.T, b *Store, k string) string {
	t.Helper()
	var l control.Lease
	granted := false
	var h control.Hold
	if err := b.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { h, granted = s.Acquire(time.Now(), lateCfg, control.Ask{}, &l) })
	}); err != nil {
		t.Fatal(err)
	}
	if granted {
		return ""
	}
	return "held (reason " + strconv.Itoa(int(h.Reason)) + ") for " + time.Until(h.Wake()).Round(time.Second).String()
}

// A swap that takes a lease and that Redis runs after the Store gave up
// changes nothing: before, it took its lease, kept in Redis with its
// request gone to the fallback, and the key's one slot was held for the
// whole Lease in every process. It holds as well when another key's
// version ran ahead of the server's clock, which a measure of that clock
// by the versions written would have taken for the clock. A release that
// comes late still frees its slot: refused, it would leave its lease to
// expire. Unanswered within its Timeout, it is sent again until Redis
// answers (see Store.resend): its Update succeeds, late.
func TestLateSwaps(t *testing.T) {
	waitsSeconds(t)
	for _, tt := range []struct {
		name string
		// setup runs before Redis is busy; the Update it returns, while.
		setup  func(t *testing.T, a *Store) func() error
		resent bool // the Update is sent again until Redis answers: it succeeds
	}{
		{"a lease taken", func(t *testing.T, a *Store) func() error {
			return func() error { _, err := acquire(t, a, "k", new(control.Lease)); return err }
		}, false},
		{"a lease taken, another key's version ahead", func(t *testing.T, a *Store) func() error {
			probed(t, a, "x")
			v := time.Now().Add(time.Duration(maxAhead/2) * time.Microsecond).UnixMicro()
			if err := a.rdb.HSet(t.Context(), a.redisKey(id("x")), "v", strconv.FormatInt(v, 10)).Err(); err != nil {
				t.Fatal(err)
			}
			probed(t, a, "x")
			return func() error { _, err := acquire(t, a, "k", new(control.Lease)); return err }
		}, false},
		{"a lease released", func(t *testing.T, a *Store) func() error {
			var l control.Lease
			if ok, err := acquire(t, a, "k", &l); err != nil || !ok {
				t.Fatalf("the request: granted %v, %v", ok, err)
			}
			return func() error { return release(t, a, "k", &l) }
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rs := startServer(t)
			prefix := testPrefix(t)
			a := New(ownClient(t, rs.addr()), prefix) // Timeout 250ms
			b := New(ownClient(t, rs.addr()), prefix)
			t.Cleanup(func() { a.Close(); b.Close() })
			probed(t, a, "k")
			late := tt.setup(t, a)
			busy := busyRedis(t, rs.addr(), time.Second)
			err := late()
			if e := <-busy; e != nil {
				t.Fatal(e)
			}
			switch {
			case tt.resent && err != nil:
				t.Fatalf("the release while Redis is busy for a second: %v; want it sent again until Redis answers", err)
			case !tt.resent && err == nil:
				t.Fatal("the Update while Redis is busy for a second succeeded, want its Timeout")
			}
			time.Sleep(50 * time.Millisecond) // Redis runs the swap
			if h := free(t, b, "k"); h != "" {
				t.Errorf("after an Update that failed (%v), the next request is %s", err, h)
			}
		})
	}
}

// A swap that Redis runs late changes nothing after a slow swap of the
// key as well: each swap measures how far Redis's clock is ahead by the
// time from its sending to its run, which includes the time it waited
// behind a busy Redis. Before, the last measure was kept, so one swap
// slowed by 0.8 s (within Timeout) made the next swap's limit 0.8 s late,
// and that swap, run by Redis half a second after the Store gave up on
// it, took its lease: the key's one slot was held in every process for
// the whole Lease. A busy Redis is slow for several calls in a row.
func TestLateSwapAfterSlowSwap(t *testing.T) {
	waitsSeconds(t)
	rs := startServer(t)
	prefix := testPrefix(t)
	a := New(ownClient(t, rs.addr()), prefix)
	a.Timeout = time.Second
	b := New(ownClient(t, rs.addr()), prefix)
	t.Cleanup(func() { a.Close(); b.Close() })
	probed(t, a, "k")

	// One slow swap, within Timeout: Redis busy for 0.8 s more.
	busy := busyRedis(t, rs.addr(), 850*time.Millisecond)
	if err := a.Update(t.Context(), "k", func(*polite.KeyState) {}); err != nil {
		t.Fatalf("an Update within its Timeout: %v", err)
	}
	if e := <-busy; e != nil {
		t.Fatal(e)
	}

	// A swap taking a lease that Redis runs 1.5 s after it was sent, half
	// a second after the Store gave up on it.
	busy = busyRedis(t, rs.addr(), 1600*time.Millisecond)
	_, err := acquire(t, a, "k", new(control.Lease))
	if e := <-busy; e != nil {
		t.Fatal(e)
	}
	if err == nil {
		t.Fatal("the Update while Redis is busy for 1.5 s succeeded, want its Timeout (1 s)")
	}
	time.Sleep(50 * time.Millisecond) // Redis runs the swap
	if h := free(t, b, "k"); h != "" {
		t.Errorf("after an Update that failed (%v), Redis ran its swap late and kept its lease: the next request in another process is %s", err, h)
	}
}

// Timeout holds only with ContextTimeoutEnabled: without it the Store
// waits for Redis's reply, up to the client's ReadTimeout, and a swap
// Redis runs after Timeout, whose reply the Store does wait for, goes
// through.
func TestLateSwapWithoutContextTimeout(t *testing.T) {
	rs := startServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.addr()}) // go-redis's defaults
	t.Cleanup(func() { rdb.Close() })
	a := New(rdb, testPrefix(t))
	a.Timeout = 100 * time.Millisecond
	t.Cleanup(func() { a.Close() })
	probed(t, a, "k")
	busy := busyRedis(t, rs.addr(), 500*time.Millisecond)
	start := time.Now()
	_, err := acquire(t, a, "k", new(control.Lease))
	took := time.Since(start)
	if e := <-busy; e != nil {
		t.Fatal(e)
	}
	if err != nil {
		t.Errorf("Update waited %v for Redis's reply, then failed: %v", took.Round(time.Millisecond), err)
	}
}

// A key nobody contends for has no turn queue: a write leaves only its
// version, state, the tokens of its last writes and the numbers of those
// sent with no limit (see Store.resend), and an Update that
// changes nothing writes nothing.
func TestUncontendedKeyHasNoQueue(t *testing.T) {
	rs := startServer(t)
	rdb := ownClient(t, rs.addr())
	a := New(rdb, testPrefix(t))
	t.Cleanup(func() { a.Close() })
	ctx := t.Context()
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	key := a.redisKey(id("k"))
	fields, err := rdb.HKeys(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(fields)
	if !slices.Equal(fields, []string{"r", "s", "v", "w"}) {
		t.Errorf("an uncontended write left the fields %q, want [r s v w]", fields)
	}
	swaps := a.Stats().Swaps
	err = rdb.Watch(ctx, func(tx *redis.Tx) error {
		if err := a.Update(ctx, "k", func(*polite.KeyState) {}); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error { p.Ping(ctx); return nil })
		return err
	}, key)
	if n := a.Stats().Swaps - swaps; n != 1 {
		t.Fatalf("the Update made %d swaps, want 1", n)
	}
	if errors.Is(err, redis.TxFailedErr) {
		t.Errorf("an Update that changed nothing wrote the key")
	} else if err != nil {
		t.Fatal(err)
	}
}
