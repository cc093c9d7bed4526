package redisstore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
	"github.com/redis/go-redis/v9"
)

// These tests run Budgets, as separate processes would, against real
// servers on loopback, in real time.

// events counts a Transport's events by kind.
type events struct {
	mu sync.Mutex
	n  map[polite.EventKind]int
}

func (ev *events) add(e polite.Event) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.n == nil {
		ev.n = make(map[polite.EventKind]int)
	}
	ev.n[e.Kind]++
}

func (ev *events) count(k polite.EventKind) int {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.n[k]
}

// client returns an http.Client on a Budget kept in a Store of its own
// (with its own Redis client) under prefix: one process's client.
func client(t *testing.T, addr, prefix string, b *polite.Budget, ev *events) *http.Client {
	t.Helper()
	b.Store = newStore(t, newClient(t, addr), prefix)
	return &http.Client{Transport: &polite.Transport{Budget: b, OnEvent: ev.add}}
}

func get(t *testing.T, c *http.Client, url string) int {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Error(err)
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Two clients, as in two processes, pace together: the server refuses none
// of their requests, which it would if each paced alone.
func TestBudgetsPaceTogether(t *testing.T) {
	waitsSeconds(t)
	addr := redisAddr(t)
	prefix := testPrefix(t)
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Second}},
	})
	defer srv.Close()
	var ev events
	clients := []*http.Client{
		client(t, addr, prefix, &polite.Budget{}, &ev),
		client(t, addr, prefix, &polite.Budget{}, &ev),
	}
	var wg sync.WaitGroup
	for _, c := range clients {
		for range 2 {
			wg.Go(func() {
				for range 8 {
					if code := get(t, c, srv.URL); code != http.StatusOK {
						t.Errorf("status %d", code)
					}
				}
			})
		}
	}
	wg.Wait()
	st := srv.Handler.Stats()
	if st.Refused != 0 {
		t.Errorf("server refused %d of %d requests, want 0", st.Refused, st.Requests)
	}
	if n := ev.count(polite.EventStoreDown); n != 0 {
		t.Errorf("%d store-down events", n)
	}
}

// A process killed (SIGKILL) with a request in flight holds its slot only
// until the request's lease ends: another process then gets it.
func TestKilledProcessSlotComesBack(t *testing.T) {
	waitsSeconds(t)
	addr := redisAddr(t)
	prefix := testPrefix(t)
	const lease = 2 * time.Second
	arrived := make(chan time.Time, 1)
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			arrived <- time.Now()
			<-r.Context().Done()
			return
		}
		got.Add(1)
	}))
	defer srv.Close()

	// The other process: one request that never ends.
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "POLITE_HELPER=hang", "POLITE_HELPER_URL="+srv.URL+"/hang",
		redisEnv+"="+addr, "POLITE_HELPER_PREFIX="+prefix, "POLITE_HELPER_LEASE="+lease.String())
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var sent time.Time
	select {
	case sent = <-arrived:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the other process's request did not arrive")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	killed := time.Now()

	var ev events
	c := client(t, addr, prefix, &polite.Budget{MaxConcurrency: 1, Lease: lease}, &ev)
	c.Transport.(*polite.Transport).OnEvent = func(e polite.Event) {
		t.Logf("%v after the other's request: %s, wait %v, %s, %v", time.Since(sent), e.Kind, e.Wait, e.Reason, e.Err)
	}
	if code := get(t, c, srv.URL+"/fast"); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	done := time.Now()
	// The slot is free when the lease ends: Lease after the request
	// started, plus at most Lease/16 (leases are kept by slot). The lease
	// starts with the other process's update, a little before its request
	// reaches the server (more on a loaded machine, when that update was
	// slow).
	if d := done.Sub(sent); d < lease-750*time.Millisecond || d > lease+lease/16+500*time.Millisecond {
		t.Errorf("slot back %v after the killed process's request started (killed after %v), want %v to %v",
			d, killed.Sub(sent), lease, lease+lease/16)
	}
}

// TestHelperProcess is the other process of the tests above; it runs only
// when they start it.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("POLITE_HELPER") != "hang" {
		t.Skip("started by other tests")
	}
	lease, _ := time.ParseDuration(os.Getenv("POLITE_HELPER_LEASE"))
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(redisEnv), ContextTimeoutEnabled: true})
	store := New(rdb, os.Getenv("POLITE_HELPER_PREFIX"))
	c := &http.Client{Transport: &polite.Transport{
		Budget: &polite.Budget{Store: store, MaxConcurrency: 1, Lease: lease},
		OnEvent: func(e polite.Event) {
			if e.Kind == polite.EventStoreDown {
				fmt.Fprintln(os.Stderr, "helper: store down:", e.Err)
			}
		},
	}}
	c.Get(os.Getenv("POLITE_HELPER_URL")) // until killed
	t.Fatal("the request ended")
}

// Redis stopped and started again during a run: every request still gets
// its answer, and the Budget reports the transitions once each.
func TestRedisRestart(t *testing.T) {
	waitsSeconds(t)
	rs := startServer(t)
	prefix := testPrefix(t)
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 50, Window: time.Second}},
	})
	defer srv.Close()
	var ev events
	rdb := redis.NewClient(&redis.Options{Addr: rs.addr(), ContextTimeoutEnabled: true, MaxRetries: -1,
		DialTimeout: 100 * time.Millisecond})
	defer rdb.Close()
	store := New(rdb, prefix)
	defer store.Close()
	c := &http.Client{Transport: &polite.Transport{Budget: &polite.Budget{Store: store}, OnEvent: ev.add}}

	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var sent, ok atomic.Int64
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				sent.Add(1)
				if get(t, c, srv.URL) == http.StatusOK {
					ok.Add(1)
				}
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	rs.stop()
	time.Sleep(time.Second)
	rs.start()
	// The Budget tries the Store again a second after it failed.
	deadline := time.Now().Add(5 * time.Second)
	for ev.count(polite.EventStoreUp) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	stop()
	wg.Wait()
	if sent.Load() != ok.Load() || ok.Load() == 0 {
		t.Errorf("%d of %d requests ok", ok.Load(), sent.Load())
	}
	if d, u := ev.count(polite.EventStoreDown), ev.count(polite.EventStoreUp); d != 1 || u != 1 {
		t.Errorf("store-down %d, store-up %d events, want 1 each", d, u)
	}
	if n := store.Stats().Swaps; n == 0 {
		t.Error("no swap in Redis")
	}
}

// Redis down from the start: requests flow, paced in memory.
func TestRedisDownAtStart(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{})
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		ContextTimeoutEnabled: true, MaxRetries: -1})
	defer rdb.Close()
	store := New(rdb, testPrefix(t))
	defer store.Close()
	var ev events
	c := &http.Client{Transport: &polite.Transport{Budget: &polite.Budget{Store: store}, OnEvent: ev.add}}
	for range 5 {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := c.Do(req)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		bufio.NewReader(resp.Body).WriteTo(io.Discard)
		resp.Body.Close()
	}
	if n := ev.count(polite.EventStoreDown); n != 1 {
		t.Errorf("%d store-down events, want 1", n)
	}
}

// A Redis that takes connections and never answers (a partition that
// drops packets), under requests whose deadline is shorter than the
// Store's Timeout: each update ended after its request, whose end the
// Budget took for the cause, and never found the Store down. Every
// request failed, for as long as Redis hung.
func TestRedisHungPastShortDeadlines(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	srv := ratelimittest.NewServer(ratelimittest.Config{})
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: l.Addr().String(), ContextTimeoutEnabled: true})
	defer rdb.Close()
	store := New(rdb, testPrefix(t)) // Timeout: 250 ms
	defer store.Close()
	var ev events
	c := &http.Client{Transport: &polite.Transport{Budget: &polite.Budget{Store: store}, OnEvent: ev.add}}
	failed := 0
	for range 8 {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := c.Do(req)
		cancel()
		if err != nil {
			failed++
			continue
		}
		bufio.NewReader(resp.Body).WriteTo(io.Discard)
		resp.Body.Close()
	}
	// The first fails (its context ends while the swap waits out the
	// Timeout), and at most one a second after it, as the Store is tried
	// again.
	if n := ev.count(polite.EventStoreDown); failed > 2 || n != 1 {
		t.Errorf("%d of 8 requests failed, %d store-down events; want at most 2 and 1", failed, n)
	}
}
