package redisstore

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// dropProxy forwards TCP to a Redis, and, while armed, closes the client's
// connection instead of forwarding the reply to its next EVALSHA: the
// script ran, its reply was lost (a network blip, a proxy or load balancer
// resetting the connection, a failover right after the write).
type dropProxy struct {
	ln     net.Listener
	target string
	armed  atomic.Int32
	mu     sync.Mutex
	conns  []net.Conn
}

func newDropProxy(t *testing.T, target string) *dropProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
	})
	return p
}

func (p *dropProxy) addr() string { return p.ln.Addr().String() }

func (p *dropProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		var drop atomic.Bool
		go func() { // client -> server
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					if bytes.Contains(bytes.ToLower(buf[:n]), []byte("evalsha")) && p.armed.Load() > 0 {
						p.armed.Add(-1)
						drop.Store(true)
					}
					if _, err := s.Write(buf[:n]); err != nil {
						return
					}
				}
				if err != nil {
					s.Close()
					return
				}
			}
		}()
		go func() { // server -> client
			buf := make([]byte, 64<<10)
			for {
				n, err := s.Read(buf)
				if n > 0 {
					if drop.Load() {
						// The script ran; its reply never arrives.
						c.Close()
						s.Close()
						return
					}
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
				}
				if err != nil {
					if err != io.EOF {
						c.Close()
					}
					c.Close()
					return
				}
			}
		}()
	}
}

// The package doc and README create the client as
// redis.NewClient(&redis.Options{Addr: ..., ContextTimeoutEnabled: true}),
// with go-redis's default MaxRetries (3). go-redis sends a command again
// when its connection fails after it was sent, so a swap whose reply was
// lost ran twice: the second run found the first's version (stale), and
// commit ran fn again on the state the first wrote. One Update was applied
// twice, and a lease the first took was kept in Redis while its caller was
// told it was held.
func TestRetriedSwapAppliedOnce(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	px := newDropProxy(t, addr)
	// As the package documentation creates it.
	rdb := redis.NewClient(&redis.Options{Addr: px.addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	a := newStore(t, rdb, prefix)
	b := newStore(t, newClient(t, addr), prefix)
	ctx := t.Context()

	t.Run("generation", func(t *testing.T) {
		if err := a.Update(ctx, "g", func(st *polite.KeyState) { bump(t, st) }); err != nil {
			t.Fatal(err)
		}
		px.armed.Store(1)
		calls := 0
		err := a.Update(ctx, "g", func(st *polite.KeyState) { calls++; bump(t, st) })
		px.armed.Store(0)
		var got uint64
		if err := b.Update(ctx, "g", func(st *polite.KeyState) { got = st.Generation() }); err != nil {
			t.Fatal(err)
		}
		if got != 2 {
			t.Errorf("after two Updates that each raise the Generation by one (the second returned %v, fn called %d times), Redis holds Generation %d, want 2: one Update was applied twice", err, calls, got)
		}
	})

	t.Run("lease", func(t *testing.T) {
		k := "l"
		probed(t, a, k)
		px.armed.Store(1)
		var l control.Lease
		granted, err := acquire(t, a, k, &l)
		px.armed.Store(0)
		if err != nil {
			t.Logf("Update = %v", err)
		}
		// The caller was told its request is held (or failed): no request of
		// this process holds the key's one slot.
		if !granted {
			if why := free(t, b, k); why != "" {
				t.Errorf("the Update that took a lease returned granted=false, err=%v; yet the key's one slot is %s in another process: a lease with no request, kept until Budget.Lease", err, why)
			}
		}
	})
}

// With ContextTimeoutEnabled, go-redis ends a call at the earlier of its
// context's deadline and ReadTimeout; a swap's limit was computed from
// Store.Timeout alone. With a Timeout above the client's ReadTimeout, the
// Store gave up at ReadTimeout, and a swap Redis ran after that but before
// Timeout still took its lease, held for the whole Lease with no request.
func TestLateSwapPastReadTimeout(t *testing.T) {
	waitsSeconds(t)
	rs := startServer(t)
	prefix := testPrefix(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.addr(), ContextTimeoutEnabled: true, MaxRetries: -1,
		ReadTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	a := New(rdb, prefix)
	a.Timeout = 2 * time.Second
	b := New(ownClient(t, rs.addr()), prefix)
	t.Cleanup(func() { a.Close(); b.Close() })
	probed(t, a, "k")
	probed(t, a, "k") // a measure of the server's clock: swaps now carry a limit

	busy := busyRedis(t, rs.addr(), time.Second)
	start := time.Now()
	granted, err := acquire(t, a, "k", new(control.Lease))
	took := time.Since(start)
	if e := <-busy; e != nil {
		t.Fatal(e)
	}
	if err == nil {
		t.Fatalf("the Update while Redis is busy for a second succeeded (granted %v) after %v, want it to fail at the client's ReadTimeout", granted, took)
	}
	time.Sleep(50 * time.Millisecond) // Redis runs the swap
	if h := free(t, b, "k"); h != "" {
		t.Errorf("the Update gave up after %v (%v); Redis ran its swap later and kept its lease: the next request in another process is %s", took.Round(time.Millisecond), err, h)
	}
}

// A swap sent again after it ran changes nothing and reports so, with the
// key's state: its own, or a later write's, by a Store of this version or
// of an older one, which writes no token (the state its own, that later
// write was lost: the Store cached its state at the newer version); after
// 31 other writes still. A swap that never ran is not taken for one that
// did.
func TestSwapSentAgain(t *testing.T) {
	addr := redisAddr(t)
	prefix := testPrefix(t)
	a := newStore(t, newClient(t, addr), prefix)
	b := newStore(t, newClient(t, addr), prefix)
	ctx := t.Context()
	var st polite.KeyState
	bump(t, &st)
	state, err := st.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	rkey := a.redisKey(id("k"))
	r := swap{mode: modeWrite, state: state, ttl: time.Minute, id: id("k"), gen: st.Generation(), tok: a.name + ".t1"}
	res, v1, _, _, err := a.swap(ctx, rkey, r)
	if err != nil || res != swapDone {
		t.Fatalf("first run: %v, %v", res, err)
	}
	res, v, got, _, err := a.swap(ctx, rkey, r)
	if err != nil || res != swapAgain || v != v1 || string(got) != string(state) {
		t.Errorf("sent again: %v at version %d with %d bytes of state, %v; want it reported done at %d with its own state", res, v, len(got), err, v1)
	}
	// An older Store's write: v and s, no token.
	bump(t, &st)
	older, _ := st.MarshalBinary()
	if err := a.rdb.HSet(ctx, rkey, "v", strconv.FormatInt(v1+1, 10), "s", older).Err(); err != nil {
		t.Fatal(err)
	}
	res, v, got, _, err = a.swap(ctx, rkey, r)
	if err != nil || res != swapAgain || v != v1+1 || string(got) != string(older) {
		t.Errorf("sent again after an older Store's write: %v at version %d with %d bytes of state, %v; want it reported done, with that write's state", res, v, len(got), err)
	}
	for range 31 {
		if err := b.Update(ctx, "k", func(ks *polite.KeyState) { bump(t, ks) }); err != nil {
			t.Fatal(err)
		}
	}
	res, v, got, _, err = a.swap(ctx, rkey, r)
	if err != nil || res != swapAgain || v <= v1+1 || len(got) == 0 || string(got) == string(state) {
		t.Errorf("sent again after 31 other writes: %v at version %d with %d bytes of state, %v; want it reported done, with the newer state", res, v, len(got), err)
	}
	r.tok = a.name + ".t2"
	if res, _, _, _, err = a.swap(ctx, rkey, r); err != nil || res != swapStale {
		t.Errorf("a swap of another token at an old version: %v, %v; want it stale", res, err)
	}
}
