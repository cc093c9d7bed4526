package redisstore

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/storetest"
	"github.com/redis/go-redis/v9"
)

// startCluster starts a Redis Cluster of three masters on loopback and
// returns their addresses.
func startCluster(t *testing.T) []string {
	t.Helper()
	var addrs []string
	for range 3 {
		srv := startServer(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000")
		addrs = append(addrs, srv.addr())
	}
	ctx := t.Context()
	var nodes []*redis.Client
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		defer c.Close()
		nodes = append(nodes, c)
	}
	const slots = 16384
	for i, c := range nodes {
		lo, hi := i*slots/3, (i+1)*slots/3-1
		if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			t.Fatalf("CLUSTER ADDSLOTSRANGE: %v", err)
		}
		if i > 0 {
			host, port, _ := strings.Cut(addrs[0], ":")
			if err := c.Do(ctx, "CLUSTER", "MEET", host, port).Err(); err != nil {
				t.Fatalf("CLUSTER MEET: %v", err)
			}
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, c := range nodes {
		for {
			info, err := c.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:3") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster not ready: %v %s", err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return addrs
}

func newClusterClient(t *testing.T, addrs []string) *redis.ClusterClient {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// The store works on Redis Cluster: it passes the conformance suite, keys
// spread over the nodes, and a waiter is woken by a store connected to
// another node.
func TestCluster(t *testing.T) {
	waitsSeconds(t)
	addrs := startCluster(t)
	prefix := testPrefix(t)
	rdb := newClusterClient(t, addrs)
	storetest.TestStore(t, func(t *testing.T) polite.Store { return New(rdb, prefix) })

	a := New(rdb, prefix)
	defer a.Close()
	b := New(newClusterClient(t, addrs), prefix)
	defer b.Close()
	ctx := t.Context()
	waitSubscribed(t, a)
	for i := range 20 {
		key := "https://api" + string(rune('a'+i)) + ".example"
		var gen uint64
		if err := a.Update(ctx, key, func(st *polite.KeyState) { bump(t, st); gen = st.Generation() }); err != nil {
			t.Fatal(err)
		}
		woke := make(chan error, 1)
		go func() {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			woke <- a.Wait(wctx, key, gen, time.Time{})
		}()
		time.Sleep(5 * time.Millisecond)
		if err := b.Update(ctx, key, func(st *polite.KeyState) { bump(t, st) }); err != nil {
			t.Fatal(err)
		}
		if err := <-woke; err != nil {
			t.Errorf("%s: waiter not woken by the other store: %v", key, err)
		}
	}
	// The keys are spread over the nodes.
	var used atomic.Int32
	rdb.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		if n, _ := c.DBSize(ctx).Result(); n > 0 {
			used.Add(1)
		}
		return nil
	})
	if n := used.Load(); n < 2 {
		t.Errorf("keys on %d node(s), want them spread", n)
	}
}
