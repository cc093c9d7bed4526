package redisstore

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/ratelimittest"
)

// Redis pauses for 2 s while four requests it granted get their answers:
// their releases, unanswered within the Store's Timeout, failed, and
// their leases stayed in Redis until the Budget's Lease (10 minutes). The
// key's observation stale once Redis answered again, its ramp counted
// them as requests awaiting an answer and let one request go every 3 s
// (its stall), in every process: six requests took 15 s against a quota
// of 100000 a second. Sent again until Redis answers (Store.resend),
// each release frees its slot once.
func TestReleaseSentAgainAfterPause(t *testing.T) {
	waitsSeconds(t)
	rs := startServer(t)
	store := New(ownClient(t, rs.addr()), testPrefix(t)) // Timeout 250 ms
	t.Cleanup(func() { store.Close() })
	var slow atomic.Bool
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 100000, Window: time.Second}},
		Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if slow.Load() {
				time.Sleep(500 * time.Millisecond)
			}
			io.WriteString(w, "ok")
		}),
	})
	defer srv.Close()
	tr := &polite.Transport{Budget: &polite.Budget{Store: store}}
	c := &http.Client{Transport: tr}
	get := func() error {
		resp, err := c.Get(srv.URL)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	for range 5 { // the key states its quota
		if err := get(); err != nil {
			t.Fatal(err)
		}
	}
	// Four requests, granted by Redis, answered while it is paused.
	slow.Store(true)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { get() })
	}
	time.Sleep(100 * time.Millisecond)
	if err := ownClient(t, rs.addr()).Do(t.Context(), "CLIENT", "PAUSE", "2000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	slow.Store(false)
	time.Sleep(2500 * time.Millisecond) // Redis answers again

	if st, _ := tr.Budget.Inspect(srv.URL, time.Now()); st.InFlight != 0 {
		t.Errorf("after the pause: %d requests in flight in Redis, where none is", st.InFlight)
	}
	start := time.Now()
	for range 6 {
		if err := get(); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	t.Logf("six requests after the pause took %v", took.Round(time.Millisecond))
	if took > 2*time.Second {
		t.Errorf("six requests after the pause took %v, against a quota of 100000 a second", took.Round(time.Millisecond))
	}
}

// Two releases of a key in one batch, Redis paused for 3 s: the batch's
// swap is sent again until Redis answers (see Store.resend), and each
// release waits as its own context allows: the leader's, of 10 s, sees it
// kept; the other, whose context ends after 700 ms, leaves then, not
// knowing whether it was kept (held by the resend, it waited past its own
// deadline, to the end of the pause).
func TestResendBatchMemberLeaves(t *testing.T) {
	waitsSeconds(t)
	rs := startServer(t)
	rdb := ownClient(t, rs.addr())
	s := newStore(t, rdb, testPrefix(t)) // Timeout 250 ms
	const k = "k"
	cfg := &control.Config{MaxConcurrency: 10, Lease: 10 * time.Minute}
	probedSlow(t, s, k)
	ls := make([]control.Lease, 2)
	for i := range ls {
		if err := s.Update(t.Context(), k, func(ks *polite.KeyState) {
			splitEdit(t, ks, func(c *control.State) { c.Acquire(time.Now(), cfg, control.Ask{}, &ls[i]) })
		}); err != nil {
			t.Fatal(err)
		}
	}
	if n := leases(t, s, k); n != 2 {
		t.Fatalf("%d requests in flight, want 2", n)
	}
	open, waitQueued := plug(t, s, k)
	release := func(ctx context.Context, l *control.Lease) error {
		return s.Update(ctx, k, func(ks *polite.KeyState) {
			splitEdit(t, ks, func(c *control.State) { c.Release(time.Now(), cfg, l, &control.Outcome{Bytes: -1}) })
		})
	}
	long, cancelLong := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelLong()
	leader := make(chan error, 1)
	go func() { leader <- release(long, &ls[0]) }()
	waitQueued(1)
	short, cancelShort := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancelShort()
	member := make(chan error, 1)
	start := time.Now()
	go func() { member <- release(short, &ls[1]) }()
	waitQueued(2)
	if err := rdb.Do(t.Context(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	defer rdb.Do(context.Background(), "CLIENT", "UNPAUSE")
	open()
	err := <-member
	if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > 1200*time.Millisecond {
		t.Errorf("the member returned %v after, %v; want its deadline's error, at 700 ms", took.Round(time.Millisecond), err)
	}
	if err := <-leader; err != nil {
		t.Errorf("the leader, sent again until Redis answered: %v", err)
	}
}

// Two processes of 8 workers each send to a key far from its quota when
// Redis pauses for 3 s. Releases sent again only while the key kept their
// writes' tokens (its last 32 writes) could not tell, under load, whether
// they ran: the leases of those that went unanswered stayed in Redis, and
// after the pause both processes went on at one request every 3 s (the
// ramp's stall) until the leases ended, a Lease later. Each release sent
// again under its number (see Store.resend) runs once, and both go on at
// the server's pace.
func TestReleasesAfterPauseUnderLoad(t *testing.T) {
	waitsSeconds(t)
	rs := startServer(t)
	prefix := testPrefix(t)
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 100000, Window: time.Second}},
		Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(20 * time.Millisecond)
			io.WriteString(w, "ok")
		}),
	})
	defer srv.Close()
	var done atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	budgets := make([]*polite.Budget, 2)
	for p := range budgets {
		store := New(ownClient(t, rs.addr()), prefix) // Timeout 250 ms
		t.Cleanup(func() { store.Close() })
		budgets[p] = &polite.Budget{Store: store}
		c := &http.Client{Transport: &polite.Transport{Budget: budgets[p]}}
		for range 8 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					resp, err := c.Get(srv.URL)
					if err != nil {
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					done.Add(1)
				}
			})
		}
	}
	time.Sleep(time.Second)
	if err := ownClient(t, rs.addr()).Do(t.Context(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second) // the pause, and a second after it
	from := done.Load()
	time.Sleep(2 * time.Second)
	after := done.Load() - from
	close(stop)
	wg.Wait()
	st, _ := budgets[0].Inspect(srv.URL, time.Now())
	t.Logf("%d requests in the 2 s from a second after the pause; %d in flight in Redis once all ended", after, st.InFlight)
	// 16 workers, 20 ms each: up to 1600 in 2 s. One every 3 s is 1.
	if after < 400 {
		t.Errorf("%d requests in the 2 s from a second after the pause; want at least 400 (16 workers of 20 ms)", after)
	}
	if st.InFlight != 0 {
		t.Errorf("%d requests in flight in Redis once all ended; want none", st.InFlight)
	}
}

// leases returns how many requests s's key k holds in flight in Redis.
func leases(t *testing.T, s *Store, k string) int64 {
	t.Helper()
	var n int64
	if err := s.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(c *control.State) { n = c.Leases() })
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// probedSlow answers k's first request after 210 ms, a round trip long
// enough that the key's ramp then lets four go together.
func probedSlow(t *testing.T, s *Store, k string) {
	t.Helper()
	var l control.Lease
	if ok, err := acquire(t, s, k, &l); err != nil || !ok {
		t.Fatalf("the first request of %s: granted %v, %v", k, ok, err)
	}
	time.Sleep(210 * time.Millisecond)
	if err := release(t, s, k, &l); err != nil {
		t.Fatal(err)
	}
}
