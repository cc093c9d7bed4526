package polite

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// tokenServer is an in-memory server reached through net.Pipe: 10,000
// tokens a minute (a fixed window from its first request), each request
// costing its X-Cost. It answers over keep-alive connections; the request
// whose X-Crash header is set is read and counted, and its connection is
// closed before any answer (the server went down: its port closed).
type tokenServer struct {
	mu       sync.Mutex
	left     int64
	reset    time.Time
	refused  int
	down     bool // dials are refused
	received []string
}

func (s *tokenServer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
	}
	c, srv := net.Pipe()
	go s.serve(srv)
	return c, nil
}

func (s *tokenServer) serve(conn net.Conn) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
		n, _ := strconv.ParseInt(req.Header.Get("X-Cost"), 10, 64)
		s.mu.Lock()
		now := time.Now()
		if s.reset.IsZero() || !now.Before(s.reset) {
			s.left, s.reset = 10000, now.Add(time.Minute)
		}
		s.received = append(s.received, req.Header.Get("X-Name"))
		status := http.StatusOK
		if n > s.left {
			status = http.StatusTooManyRequests
			s.refused++
		} else {
			s.left -= n
		}
		left, t := s.left, int64(s.reset.Sub(now)/time.Second)
		crash := req.Header.Get("X-Crash") != ""
		if crash {
			s.down = true // the server goes down: no more connections
		}
		s.mu.Unlock()
		if crash {
			return // counted, and the connection closed before any answer
		}
		resp := &http.Response{StatusCode: status, ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{
			"Ratelimit-Policy": {`"tpm";q=10000;qu="tokens";w=60`},
			"Ratelimit":        {fmt.Sprintf(`"tpm";r=%d;t=%d`, left, t)},
		}, ContentLength: 0, Body: http.NoBody}
		if err := resp.Write(conn); err != nil {
			return
		}
	}
}

// A Base's error that is a dial's does not show that the request never
// reached the server: one sent over a kept-alive connection the server
// then closed (it went down) is sent again by net/http itself, on a new
// connection (a replayable request), and that dial refused, net/http
// returns the dial's *net.OpError. Read as a request never sent (as a
// change once did), its 3,000 tokens, which the server counted, went
// uncharged, and the next request of 5,000 was sent at once against the
// 4,000 the server had left, and refused. It is charged, as an answer
// stating nothing is, and the next request waits for the window.
func TestDialErrorAfterNetHTTPRetryCharged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &tokenServer{}
		base := &http.Transport{DialContext: srv.dial}
		defer base.CloseIdleConnections()
		tr := &Transport{
			Base: base,
			Cost: func(r *http.Request) Cost {
				n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
				return Cost{Tokens: n}
			},
			MaxAttempts: 1,
		}
		c := &http.Client{Transport: tr}
		send := func(name string, cost int, crash bool) (int, error) {
			req, _ := http.NewRequest(http.MethodPost, "http://llm.example/v1/chat/completions", strings.NewReader(`{"x":1}`))
			req.Header.Set("X-Cost", strconv.Itoa(cost))
			req.Header.Set("X-Name", name)
			req.Header.Set("Idempotency-Key", name)
			if crash {
				req.Header.Set("X-Crash", "1")
			}
			resp, err := c.Do(req)
			if err != nil {
				return 0, err
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode, nil
		}
		if code, err := send("first", 3000, false); code != http.StatusOK {
			t.Fatalf("first: %d %v", code, err)
		}
		if _, err := send("crashed", 3000, true); err == nil {
			t.Fatal("crashed: no error")
		} else {
			t.Logf("crashed: %v", err)
		}
		srv.mu.Lock()
		srv.down = false // back up
		srv.mu.Unlock()
		code, err := send("next", 5000, false)
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if err != nil || code != http.StatusOK || srv.refused > 0 {
			t.Errorf("next request of 5,000 tokens: %d, %v; server received %v and refused %d; want it held until the server's window resets (the server counted the 3,000 of the request whose retried dial was refused, and had 4,000 left)",
				code, err, srv.received, srv.refused)
		}
	})
}
