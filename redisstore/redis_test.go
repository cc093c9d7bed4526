package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The tests need a Redis: POLITE_REDIS_ADDR names one (host:port, on
// loopback). Without it they are skipped, except in CI (CI=true), where
// they fail. The script .ci/redis starts one.
const redisEnv = "POLITE_REDIS_ADDR"

const howToStart = "start one with\n\tredis-server --port 6390 --bind 127.0.0.1 --save '' --appendonly no &\n" +
	"\texport " + redisEnv + "=127.0.0.1:6390\n(Debian: apt-get install redis-server), or source .ci/redis"

// redisAddr returns the address of the test Redis, or skips (fails in CI).
func redisAddr(t testing.TB) string {
	t.Helper()
	addr := os.Getenv(redisEnv)
	if addr == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: this test needs a Redis; %s", redisEnv, howToStart)
		}
		t.Skipf("%s is not set: this test needs a Redis; %s", redisEnv, howToStart)
	}
	return addr
}

// waitsSeconds skips, under -short, a test that spends seconds waiting in
// real time (on timeouts, expiries or a Redis restarting): CI runs the
// tests a second time with -short on the go.mod floor toolchain, where the
// rest of them and the conformance suite are the check.
func waitsSeconds(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("waits seconds in real time: run without -short")
	}
}

// newClient returns a client of the Redis at addr, closed at the end of the test.
func newClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
		DialTimeout:           time.Second,
	})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// counter counts the commands a client sends: one per round trip for
// single commands and scripts.
type counter struct {
	n   atomic.Int64
	log func(string)
}

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "hello" || name == "client" {
			return next(ctx, cmd) // a new connection's handshake
		}
		c.n.Add(1)
		if c.log != nil {
			c.log(cmd.Name())
		}
		return next(ctx, cmd)
	}
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if name := cmd.Name(); name != "hello" && name != "client" {
				c.n.Add(1) // not only a new connection's handshake
				break
			}
		}
		return next(ctx, cmds)
	}
}

// testPrefix returns a prefix no other test uses.
func testPrefix(t testing.TB) string {
	b := make([]byte, 4)
	rand.Read(b)
	return "polite-test:" + hex.EncodeToString(b) + ":"
}

// newStore returns a Store on rdb under prefix, closed (and its keys
// deleted) at the end of the test.
func newStore(t testing.TB, rdb redis.UniversalClient, prefix string) *Store {
	t.Helper()
	s := New(rdb, prefix)
	t.Cleanup(func() {
		s.Close()
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
	return s
}

// server is a redis-server the test started, on a free loopback port.
type server struct {
	t    testing.TB
	port int
	dir  string
	args []string
	cmd  *exec.Cmd
}

// startServer starts a redis-server of the test's own; it skips the test
// (fails it in CI) when redis-server is not on the PATH.
func startServer(t testing.TB, extra ...string) *server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is not on the PATH: %s", howToStart)
		}
		t.Skipf("redis-server is not on the PATH: %s", howToStart)
	}
	srv := &server{t: t, port: freePort(t), dir: t.TempDir()}
	srv.args = append([]string{"--port", strconv.Itoa(srv.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", srv.dir}, extra...)
	srv.start()
	t.Cleanup(srv.stop)
	return srv
}

func (srv *server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.port)) }

// start starts the server and waits until it answers.
func (srv *server) start() {
	srv.t.Helper()
	cmd := exec.Command("redis-server", srv.args...)
	log, err := os.Create(filepath.Join(srv.dir, fmt.Sprintf("redis-%d.log", time.Now().UnixNano())))
	if err != nil {
		srv.t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		srv.t.Fatalf("starting redis-server: %v", err)
	}
	srv.cmd = cmd
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", srv.addr(), 100*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			srv.t.Fatalf("redis-server on %s did not start: %v", srv.addr(), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop stops the server (by its PID) and waits for it to exit.
func (srv *server) stop() {
	if srv.cmd == nil {
		return
	}
	srv.cmd.Process.Kill()
	srv.cmd.Wait()
	srv.cmd = nil
}

// freePort returns a loopback port nobody listens on.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
