package redisstore

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// Keys no store could have written (a hostile or broken writer sharing the
// Redis) start over, as a state that does not decode does: none holds a
// key, loses an update or deafens waiters for long.

// A version at or above 2^53, where Lua's numbers lose the ones, made
// "old plus one" write the same version again: a store whose cache held
// the old state swapped over a newer one, and an update was lost. Such a
// key now starts over, and no update is lost after it.
func TestHugeVersionStartsOver(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	a := newStore(t, rdb, prefix)
	b := newStore(t, newClient(t, addr), prefix)
	ctx := t.Context()
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { start(t, st, time.Now(), time.Hour, time.Minute); bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	rkey := a.redisKey(id("k"))
	if err := rdb.HSet(ctx, rkey, "v", "9007199254740992").Err(); err != nil {
		t.Fatal(err)
	}
	// Both stores read the key, which starts over, and bump it once.
	for _, s := range []*Store{a, b} {
		if err := s.Update(ctx, "k", func(st *polite.KeyState) {}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { start(t, st, time.Now(), time.Hour, time.Minute); bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	g0 := generationOf(t, addr, prefix, "k")
	b.Close() // b hears no notification: its cache is stale from here
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	var seen uint64
	if err := b.Update(ctx, "k", func(st *polite.KeyState) { seen = st.Generation(); bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	v, _ := rdb.HGet(ctx, rkey, "v").Result()
	if got := generationOf(t, addr, prefix, "k"); seen != g0+1 || got != g0+2 {
		t.Errorf("b's update ran on generation %d (Redis had %d); final generation %d, want %d: an update was lost (version %s)", seen, g0+1, got, g0+2, v)
	}
}

// "None above 64 KiB is ever read" (doc.go): a state of 32 MiB was read
// whole by every swap that missed the cache (one of 256 MiB could not be
// read within Timeout, and every update failed for as long as it stayed).
// It is replaced, unread.
func TestHugeStateNotRead(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	a := newStore(t, rdb, prefix)
	ctx := t.Context()
	rkey := a.redisKey(id("k"))
	const size = 32 << 20
	if err := rdb.HSet(ctx, rkey, "v", "1", "s", strings.Repeat("x", size)).Err(); err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) })
	runtime.ReadMemStats(&m1)
	if d := m1.TotalAlloc - m0.TotalAlloc; d > 4<<20 || err != nil {
		t.Errorf("Update on a key holding %d MiB allocated %d MiB (err %v), want none above 64 KiB read and the key replaced", size>>20, d>>20, err)
	}
}

// A key whose fields no store wrote starts over, and the next update goes:
//   - a turn queue whose turn ends far in the future blocked every update
//     of the key: each failed with ErrContention after four Timeouts, for
//     as long as the queue stayed;
//   - a version Go parses but Lua compares as another string ("+5") was
//     never matched: about 12,000 stale swaps in a second, then
//     ErrContention, on every update;
//   - a turn queue that starts with a space (or has two between names)
//     failed the script ("attempt to get length of local 'head'") on
//     every update, until the key's TTL ended.
func TestHostileFieldsStartOver(t *testing.T) {
	for _, c := range []struct {
		name  string
		field func(version string) []any
	}{
		{"turn", func(string) []any { return []any{"q", "intruder", "qt", "99999999999999999"} }},
		{"version", func(v string) []any { return []any{"v", "+" + v} }},
		{"queue", func(string) []any { return []any{"q", " intruder", "qt", "1"} }},
		// Names one space apart, but no store's (16 hex digits): each was
		// given its turn, 2000 of them, and the key was held 40s, every
		// Update failing with ErrContention.
		{"queue of names no store has", func(string) []any {
			return []any{"q", strings.TrimSpace(strings.Repeat("x ", 2000)), "qt", "1"}
		}},
		// Names of the right shape (16 hex digits), of stores gone (a
		// crashed fleet, or a hostile writer): each was given a turn of
		// its own, 240 of them in 4 KiB, and the key was held 4.8s.
		{"queue of stores gone", func(string) []any {
			names := make([]string, 240)
			for i := range names {
				names[i] = fmt.Sprintf("dead%012x", i)
			}
			return []any{"q", strings.Join(names, " "), "qt", "1"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rdb, a, rkey := bumpedKey(t)
			ctx := t.Context()
			v, _ := rdb.HGet(ctx, rkey, "v").Result()
			if err := rdb.HSet(ctx, rkey, c.field(v)...).Err(); err != nil {
				t.Fatal(err)
			}
			before := a.Stats().Swaps
			start := time.Now()
			if err := a.Update(context.Background(), "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
				t.Errorf("Update of a key with a %s no store wrote: %v after %v and %d swaps", c.name, err, time.Since(start).Round(time.Millisecond), a.Stats().Swaps-before)
			}
		})
	}
}

// A notification naming a version no swap writes was taken at its word:
// every later notification, and the store's own swaps, looked older, and
// waiters slept to their deadline. Before, only versions from 2^53 on were
// ignored, and 2^53 - 1 deafened them as MaxInt64 had. Versions more than
// maxAhead past the server's clock are ignored; one within it is undone
// by the store's next swap.
func TestHostileNotificationIgnored(t *testing.T) {
	for _, c := range []struct {
		name string
		ver  func() int64
	}{
		{"MaxInt64", func() int64 { return math.MaxInt64 }},
		{"2^53-1", func() int64 { return maxVersion - 1 }},
		{"within maxAhead", func() int64 { return time.Now().UnixMicro() + maxAhead/2 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rdb, a, b := twoStores(t)
			ctx := t.Context()
			var gen uint64
			if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st); gen = st.Generation() }); err != nil {
				t.Fatal(err)
			}
			if err := rdb.Publish(ctx, a.channel, id("k")+" "+strconv.FormatInt(c.ver(), 10)+" "+strconv.FormatUint(gen, 10)).Err(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			woke := waitAtMost(a, "k", gen, 2*time.Second)
			time.Sleep(50 * time.Millisecond)
			if err := b.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
				t.Fatal(err)
			}
			if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
				t.Fatal(err)
			}
			if d := <-woke; d > 500*time.Millisecond {
				t.Errorf("Wait(gen %d) returned after %v, at its deadline: two later releases (gen %d) did not wake it", gen, d.Round(time.Millisecond), gen+2)
			}
		})
	}
}

// A notification of a version ahead of the key's, within maxAhead, with a
// generation the key never had: Wait found the generation changed and
// returned at once, the Budget asked again (one swap), was held again with
// the key's generation, and Wait returned at once again, the store's own
// swaps being older than the notification. Before, a request held for
// 300 ms made about 1,250 to 3,000 swaps; the store's swap now sets the
// generation it found.
func TestHostileNotificationNoHotLoop(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	a := newStore(t, rdb, prefix)
	waitSubscribed(t, a)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	defer close(release)
	c := &http.Client{Transport: &polite.Transport{Budget: &polite.Budget{Store: a, MaxConcurrency: 1}}}
	go func() {
		if resp, err := c.Get(srv.URL + "/hang"); err == nil {
			resp.Body.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond) // the first request holds the one slot
	ver := time.Now().UnixMicro() + maxAhead/2
	if err := rdb.Publish(t.Context(), prefix+"changed", id(srv.URL)+" "+strconv.FormatInt(ver, 10)+" 999999").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	before := a.Stats().Swaps
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/held", nil)
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("the second request was granted while the first holds the one slot")
	}
	if n := a.Stats().Swaps - before; n > 20 {
		t.Errorf("a request held for 300ms made %d swaps, want a few", n)
	}
}

// A version in the key far past the server's clock (below 2^53, so the
// script took it) was counted on from there: every store kept it as the
// newest version seen, and once the key started over at the clock (at
// 2^53), or whenever another store wrote, took the key's real versions
// for older. A held request's Wait then returned at once, again and again,
// or slept to its deadline, deaf to other stores' releases. Such a key now
// starts over at once.
func TestVersionFarAheadStartsOver(t *testing.T) {
	for _, c := range []struct {
		name string
		ver  func() int64
	}{
		{"2^53-2", func() int64 { return maxVersion - 2 }},
		{"two hours ahead", func() int64 { return time.Now().Add(2 * time.Hour).UnixMicro() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rdb, a, b := twoStores(t)
			ctx := t.Context()
			if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
				t.Fatal(err)
			}
			if err := rdb.HSet(ctx, a.redisKey(id("k")), "v", strconv.FormatInt(c.ver(), 10)).Err(); err != nil {
				t.Fatal(err)
			}
			var gen uint64
			for range 4 {
				if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st); gen = st.Generation() }); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(50 * time.Millisecond)
			woke := waitAtMost(a, "k", gen, 2*time.Second)
			select {
			case d := <-woke:
				t.Fatalf("Wait(gen %d) returned after %v, with no change since the Update that returned it", gen, d.Round(time.Millisecond))
			case <-time.After(100 * time.Millisecond):
			}
			if err := b.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
				t.Fatal(err)
			}
			if d := <-woke; d > 500*time.Millisecond {
				t.Errorf("Wait(gen %d) returned after %v, at its deadline: another store's release did not wake it", gen, d.Round(time.Millisecond))
			}
		})
	}
}

// A key of another type at a state's name (a string, say) failed HSTRLEN
// with WRONGTYPE: every update of the budget key failed for as long as it
// lived, forever without a TTL. It is replaced.
func TestWrongTypeKeyStartsOver(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	a := newStore(t, rdb, prefix)
	ctx := t.Context()
	if err := rdb.Set(ctx, a.redisKey(id("k")), "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(ctx, "k", 0, time.Now().Add(10*time.Millisecond)); err != nil {
		t.Errorf("Wait on a key whose Redis key is a string: %v", err)
	}
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Errorf("Update of a key whose Redis key is a string: %v", err)
	}
}

// Wait on a key this process has not seen reads it first, bounded by the
// context: with Redis slow, the read failed at the context's deadline a
// moment before the context said so, and Wait returned nil, not the
// context's error (8 of 20 times). Then it returned
// context.DeadlineExceeded of its own while ctx.Err() was still nil
// (14 of 20 times), against polite.Store's "ctx.Err() in the last case":
// the Budget (Budget.wait) takes an error with ctx.Err() == nil for the
// Store's failure: EventStoreDown, a second in the fallback, where
// requests in flight in the Store are not counted against MaxConcurrency.
func TestWaitReadEndsWithContext(t *testing.T) {
	waitsSeconds(t)
	a := pausedStore(t)
	// A request's Update of another key is out: its connection is busy.
	go a.Update(context.Background(), "busy", func(st *polite.KeyState) { bump(t, st) })
	time.Sleep(10 * time.Millisecond)
	bad := 0
	for i := range 20 {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		start := time.Now()
		err := a.Wait(ctx, "k"+strconv.Itoa(i), 0, time.Time{})
		cerr := ctx.Err() // as Budget.wait looks, right after Wait returns
		cancel()
		if err != context.DeadlineExceeded || cerr == nil {
			bad++
			t.Logf("Wait with a 20ms context = %v after %v, ctx.Err() then %v", err, time.Since(start).Round(time.Millisecond), cerr)
		}
	}
	if bad > 0 {
		t.Errorf("%d of 20 Waits whose context ended returned something other than context.DeadlineExceeded, or returned it while ctx.Err() was nil", bad)
	}
}

// pausedStore returns a Store on a Redis of its own, subscribed, whose
// clients Redis then pauses for 3 s (as a long command, or a fork on a
// big instance, stalls it).
func pausedStore(t *testing.T) *Store {
	t.Helper()
	rs := startServer(t)
	admin := ownClient(t, rs.addr())
	a := New(ownClient(t, rs.addr()), testPrefix(t))
	t.Cleanup(func() { a.Close() })
	waitSubscribed(t, a)
	if err := admin.Do(t.Context(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "CLIENT", "UNPAUSE") })
	return a
}

// generationOf reads key's generation through a fresh Store.
func generationOf(t *testing.T, addr, prefix, key string) uint64 {
	t.Helper()
	c := newStore(t, newClient(t, addr), prefix)
	var g uint64
	if err := c.Update(t.Context(), key, func(st *polite.KeyState) { g = st.Generation() }); err != nil {
		t.Fatalf("read: %v", err)
	}
	return g
}

// One bad write (a hostile or broken process sharing the store) keeps the
// stored state alive no longer than a pause may (DESIGN.md §3). A process
// whose clock is 70 years ahead logs the starts of a stated quota 70 years
// ahead. Before, the Budget's bound left start logs as they were: the
// state's Expiry, which counts them, stayed 70 years ahead, and so did the
// key's TTL, written again by every healthy process's request.
func TestFarFutureStartsBounded(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	good := newStore(t, newClient(t, addr), prefix)
	c := &http.Client{Transport: &polite.Transport{Budget: &polite.Budget{Store: good}}}
	getOK := func() {
		t.Helper()
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	getOK()
	keys, _ := rdb.Keys(t.Context(), prefix+"{*").Result()
	if len(keys) != 1 {
		t.Fatalf("keys %q, want one", keys)
	}
	origin := srv.URL // the budget key of the server's origin
	if good.redisKey(id(origin)) != keys[0] {
		t.Fatalf("key %q is not %q's", keys[0], origin)
	}

	// The broken process: its clock is 70 years ahead.
	broken := newStore(t, newClient(t, addr), prefix)
	fut := time.Now().AddDate(70, 0, 0)
	q := []parse.Quota{{Policy: "p", Unit: "requests", Limit: 100, Window: time.Hour, Remaining: 90, Reset: 30 * time.Minute}}
	if err := broken.Update(t.Context(), origin, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) {
			for i := range 3 {
				at := fut.Add(time.Duration(i) * time.Second)
				var l control.Lease
				if _, ok := s.Acquire(at, &control.Config{}, control.Ask{}, &l); ok {
					s.Release(at.Add(time.Millisecond), &control.Config{}, &l, &control.Outcome{First: true, Quotas: q, Bytes: -1})
				}
			}
		})
	}); err != nil {
		t.Fatal(err)
	}

	// The healthy process's requests rewrite the state (Bound first).
	for range 2 {
		getOK()
	}
	ttl, err := rdb.PTTL(t.Context(), keys[0]).Result()
	if err != nil {
		t.Fatal(err)
	}
	var exp time.Time
	good.Update(t.Context(), origin, func(ks *polite.KeyState) { exp = ks.Expiry() })
	if limit := control.MaxPause + 10*time.Minute + 2*time.Minute; ttl > limit {
		t.Errorf("after healthy requests, the key's TTL is %v (state Expiry %v), want at most %v: one bad write keeps the state alive for decades",
			ttl.Round(time.Hour), exp.Format(time.DateOnly), limit)
	}
}

// twoStores returns a client of the test's Redis and two Stores on it,
// under a prefix of the test's, both listening.
func twoStores(t *testing.T) (*redis.Client, *Store, *Store) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	rdb := newClient(t, addr)
	a := newStore(t, rdb, prefix)
	b := newStore(t, newClient(t, addr), prefix)
	waitSubscribed(t, a)
	waitSubscribed(t, b)
	return rdb, a, b
}

// waitAtMost runs s.Wait(key, gen) for at most d, and sends how long it
// took on the channel it returns.
func waitAtMost(s *Store, key string, gen uint64, d time.Duration) <-chan time.Duration {
	woke := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		s.Wait(context.Background(), key, gen, start.Add(d))
		woke <- time.Since(start)
	}()
	return woke
}

// An Update held by other stores' turns returns once its context ends,
// within a Timeout: it went on swapping for four Timeouts (a second) with
// the context ended, the swaps detached from it so that the updates
// batched with it are not lost. Here another store takes a turn every
// few milliseconds, and an Update with 50ms of context returned after a
// second.
func TestUpdateEndsWithContextUnderContention(t *testing.T) {
	addr := redisAddr(t)
	rdb := newClient(t, addr)
	a := newStore(t, rdb, testPrefix(t))
	ctx := t.Context()
	if err := a.Update(ctx, "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	rkey := a.redisKey(id("k"))
	stop := make(chan struct{})
	done := make(chan struct{})
	first := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			if i == 1 {
				close(first)
			}
			select {
			case <-stop:
				return
			default:
			}
			now, err := rdb.Time(ctx).Result()
			if err == nil {
				rdb.HSet(ctx, rkey, "q", "0123456789abcdef", "qt", strconv.FormatInt(now.Add(15*time.Millisecond).UnixMicro(), 10))
			}
			time.Sleep(time.Millisecond)
		}
	}()
	defer func() { close(stop); <-done }()
	<-first
	uctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := a.Update(uctx, "k", func(st *polite.KeyState) { bump(t, st) })
	d := time.Since(start)
	t.Logf("returned after %v: %v", d.Round(time.Millisecond), err)
	if bound := 50*time.Millisecond + a.timeout() + 100*time.Millisecond; d > bound {
		t.Errorf("Update with 50ms of context under contention returned after %v (%v), want within a Timeout (%v) of its context's end", d.Round(time.Millisecond), err, a.timeout())
	}
	if err == nil {
		t.Errorf("Update held by another store's turns for its whole context succeeded")
	}
}

// A turn queue whose turn end read as NaN in Lua ("nan", which tonumber
// takes and every comparison fails) was neither past nor in the far
// future: the swap script's checks (qt > clock()+turn, qt <= clock())
// both passed it, so the turn of the queue's head never lapsed, and every
// Update of a store named behind it failed with ErrContention for as long
// as the key stayed. Store names are readable by anyone sharing the
// Redis (each write's token, "name.n", is in the key's w field).
func TestHostileNaNTurnStartsOver(t *testing.T) {
	rdb, a, rkey := bumpedKey(t)
	ctx := t.Context()
	// Store names are readable by anyone sharing the Redis: each write's
	// token ("name.n") is in the key's w field.
	if err := rdb.HSet(ctx, rkey, "q", "0123456789abcdef "+a.name, "qt", "nan").Err(); err != nil {
		t.Fatal(err)
	}
	before := a.Stats().Swaps
	start := time.Now()
	if err := a.Update(context.Background(), "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Errorf("Update of a key whose turn ends at NaN: %v after %v and %d swaps; want the queue dropped and the update kept",
			err, time.Since(start).Round(time.Millisecond), a.Stats().Swaps-before)
	}
}

// A swap sent again after its reply was lost finds its token among the
// key's last writes and answers with the key's version and state, before
// the checks that start over a key no store wrote. A version not
// canonical was read as the reply's, and the error that rejected it
// printed the whole reply, the state's bytes with it (up to 64 KiB in one
// error); a version past 2^53 or hours ahead was taken for the key's, and
// one past an int64 failed the update; sent late (by: 1, the caller gone),
// a state past maxState came back whole. Such a key now starts over, as
// it does without the token, or the late swap changes nothing, and no
// error carries a reply's state.
func TestResentSwapHostileKey(t *testing.T) {
	secret := strings.Repeat("state-bytes ", 1000)
	for _, tt := range []struct {
		name    string
		v, s    func() string
		late    bool
		wantRes swapResult
	}{
		{"version not canonical", func() string { return "0x1f" }, func() string { return secret }, false, swapDone},
		{"version past 2^53", func() string { return "9007199254740993" }, nil, false, swapDone},
		{"version two hours ahead", func() string { return strconv.FormatInt(time.Now().Add(2*time.Hour).UnixMicro(), 10) }, nil, false, swapDone},
		{"version past int64", func() string { return "99999999999999999999" }, nil, false, swapDone},
		{"state past maxState, late", nil, func() string { return strings.Repeat("x", maxState+1) }, true, swapLate},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rdb, a, rkey := bumpedKey(t)
			ctx := t.Context()
			w, err := rdb.HGet(ctx, rkey, "w").Result()
			if err != nil {
				t.Fatal(err)
			}
			tok, _, _ := strings.Cut(w, " ")
			if tt.v != nil {
				if err := rdb.HSet(ctx, rkey, "v", tt.v()).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if tt.s != nil {
				if err := rdb.HSet(ctx, rkey, "s", tt.s()).Err(); err != nil {
					t.Fatal(err)
				}
			}
			var st polite.KeyState
			bump(t, &st)
			state, err := st.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			r := swap{expect: 0, mode: modeWrite, state: state, ttl: time.Minute, id: a.name, tok: tok}
			if tt.late {
				r.by = 1
			}
			res, ver, got, _, err := a.swap(ctx, rkey, r)
			if err != nil {
				if strings.Contains(err.Error(), "state-bytes") {
					t.Fatalf("error carries the key's state (%d bytes): %.80s…", len(err.Error()), err)
				}
				t.Fatalf("swap resent over a key no store wrote: %v", err)
			}
			if res != tt.wantRes || ver < 0 || ver >= maxVersion || ver > time.Now().Add(time.Hour).UnixMicro() || len(got) > 0 {
				t.Errorf("swap resent over a key no store wrote: result %v, version %d, %d bytes of state; want result %v over a key started over", res, ver, len(got), tt.wantRes)
			}
		})
	}
}

// bumpedKey returns a Store of a prefix of its own that wrote its key "k"
// once, its client, and the key's name in Redis, for a test to plant what
// no store writes in it.
func bumpedKey(t *testing.T) (*redis.Client, *Store, string) {
	t.Helper()
	rdb := newClient(t, redisAddr(t))
	a := newStore(t, rdb, testPrefix(t))
	if err := a.Update(t.Context(), "k", func(st *polite.KeyState) { bump(t, st) }); err != nil {
		t.Fatal(err)
	}
	return rdb, a, a.redisKey(id("k"))
}
