package redisstore

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Close waits twice RetryInterval at most. When the subscription's first
// SUBSCRIBE failed on a Redis that accepts connections and never answers,
// its receive reconnects inside go-redis while holding the PubSub's mutex;
// Close's ps.Close(), called before its bounded wait, blocked on that
// mutex until the handshake read timed out (the client's ReadTimeout
// without ContextTimeoutEnabled, the go-redis default; for ever with
// ReadTimeout -1): 1.5 s here, where it takes about 0.1 s now.
func TestCloseWhileSubscriptionReconnects(t *testing.T) {
	waitsSeconds(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	conns := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
			accepted.Add(1)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for {
			select {
			case c := <-conns:
				c.Close()
			default:
				return
			}
		}
	})
	rdb := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), ReadTimeout: 1500 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	s := New(rdb, testPrefix(t))
	s.RetryInterval = 50 * time.Millisecond
	s.init()
	s.start()
	// The first connection is Subscribe's; the second is the receive's
	// reconnect, made under the PubSub's mutex.
	deadline := time.Now().Add(5 * time.Second)
	for accepted.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the subscription did not reconnect")
		}
		time.Sleep(time.Millisecond)
	}
	began := time.Now()
	s.Close()
	if d := time.Since(began); d > time.Second {
		t.Errorf("Close took %v; want twice RetryInterval (%v), under 1s whatever the load", d, 2*s.RetryInterval)
	}
}
