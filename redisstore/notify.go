package redisstore

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// start starts the Store's subscription, once.
func (s *Store) start() {
	if s.started.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started.Load() || s.closed {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	s.stop, s.done = stop, make(chan struct{})
	s.started.Store(true)
	go s.run(ctx)
}

// run keeps the Store subscribed to its channel until ctx ends: the one
// goroutine a Store runs.
func (s *Store) run(ctx context.Context) {
	defer close(s.done)
	defer s.setSubscribed(false)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		s.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		t.Reset(s.retryInterval())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// listen subscribes and applies notifications until the connection fails
// or ctx ends. A quiet connection is pinged every RetryInterval; one that
// does not answer the ping within another is given up.
func (s *Store) listen(ctx context.Context) {
	// The subscription's connection is made here, and again by a receive
	// after it failed: each bounded, so that a Redis that accepts the
	// connection and never answers holds neither longer than twice
	// RetryInterval where the client honours context deadlines (and sets
	// any: not with ReadTimeout -1), else its ReadTimeout. Close waits for
	// neither longer than twice RetryInterval.
	interval := s.retryInterval()
	sctx, cancel := context.WithTimeout(ctx, interval)
	ps := s.rdb.Subscribe(sctx, s.channel)
	cancel()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ps.Close()
		return
	}
	s.ps = ps
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.ps = nil
		s.mu.Unlock()
		_ = ps.Close()
	}()

	pinged := false
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*interval)
		msg, err := ps.ReceiveTimeout(rctx, interval)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if isTimeout(err) && !pinged && ping(ctx, ps, interval) == nil {
				pinged = true
				continue
			}
			s.setSubscribed(false)
			return
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				s.setSubscribed(true)
			}
		case *redis.Message:
			s.stats.notes.Add(1)
			s.receive(m.Payload)
		}
	}
}

// ping pings the subscription's connection, for interval at most.
func ping(ctx context.Context, ps *redis.PubSub, interval time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, interval)
	defer cancel()
	return ps.Ping(ctx)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// receive applies one notification: "name version generation[ state]".
// Anything malformed is ignored.
func (s *Store) receive(payload string) {
	kid, rest, ok := strings.Cut(payload, " ")
	if !ok || len(kid) != 32 {
		return
	}
	vs, rest, ok := strings.Cut(rest, " ")
	if !ok {
		return
	}
	gs, state, withState := strings.Cut(rest, " ")
	ver, err := strconv.ParseInt(vs, 10, 64)
	if err != nil || ver <= 0 || ver >= maxVersion {
		return // a version no swap writes: taken, it would deafen waiters
	}
	gen, err := strconv.ParseUint(gs, 10, 64)
	if err != nil {
		return
	}
	var st []byte
	if withState && len(state) <= maxNotifyState {
		// No store sends a longer one: kept, it would cost the process
		// what the publisher pleases, a key this process uses at a time.
		st = []byte(state)
	}
	s.shard(kid).notify(kid, ver, gen, st)
}
