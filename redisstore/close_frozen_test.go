package redisstore

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/redis/go-redis/v9"
)

// frozenRedis listens on loopback and accepts connections, but never
// answers, as a Redis that is stopped (SIGSTOP, a paused VM, a stalled
// proxy) does: the kernel completes the TCP handshake, nothing replies.
func frozenRedis(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// Close stops the subscription and waits for it to end. While the
// subscription was (re)connecting to a Redis that accepts connections but
// does not answer, its connection was not yet the Store's, so Close could
// not close it, and cancelling the subscription's context does not end
// go-redis's handshake read: Close waited for the client's ReadTimeout
// (about 5 s with the options of the package example), and for ever with
// ReadTimeout -1. It waits twice RetryInterval at most now. Updates
// meanwhile end within Timeout.
func TestCloseOnFrozenRedis(t *testing.T) {
	for _, rt := range []time.Duration{0, -1} {
		addr := frozenRedis(t)
		rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, ReadTimeout: rt})
		t.Cleanup(func() { rdb.Close() })
		s := New(rdb, testPrefix(t))
		s.Timeout = 100 * time.Millisecond
		s.RetryInterval = 100 * time.Millisecond
		began := time.Now()
		err := s.Update(context.Background(), "k", func(ks *polite.KeyState) { bump(t, ks) })
		t.Logf("ReadTimeout %v: Update returned after %v: %v", rt, time.Since(began), err)
		time.Sleep(50 * time.Millisecond) // the subscription is connecting
		began = time.Now()
		done := make(chan struct{})
		go func() { s.Close(); close(done) }()
		select {
		case <-done:
			if d := time.Since(began); d > time.Second {
				t.Errorf("ReadTimeout %v: Close took %v on a Redis that does not answer", rt, d)
			}
		case <-time.After(3 * time.Second):
			t.Errorf("ReadTimeout %v: Close still blocked after 3s on a Redis that does not answer", rt)
		}
	}
}
