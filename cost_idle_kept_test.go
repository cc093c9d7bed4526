package polite_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// pointsServer is a fixed-window server of limit points per window, as
// GitHub's GraphQL API (5,000 points an hour) or any IETF server with a
// quota unit of points: each request is charged the points its
// X-Test-Points header says, and refused with a 429 when they are not
// left. Every answer states the quota with RateLimit-Policy and RateLimit.
type pointsServer struct {
	mu      sync.Mutex
	limit   int64
	window  time.Duration
	start   time.Time
	used    int64
	refused int
}

func (s *pointsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.start.IsZero() || now.Sub(s.start) >= s.window {
		s.start, s.used = now, 0
	}
	cost, _ := strconv.ParseInt(r.Header.Get("X-Test-Points"), 10, 64)
	reset := int64((s.window - now.Sub(s.start) + time.Second - 1) / time.Second)
	status := http.StatusOK
	if s.used+cost > s.limit {
		status = http.StatusTooManyRequests
		s.refused++
	} else {
		s.used += cost
	}
	w.Header().Set("RateLimit-Policy", fmt.Sprintf(`"hour";q=%d;w=%d;qu="points"`, s.limit, int64(s.window/time.Second)))
	w.Header().Set("RateLimit", fmt.Sprintf(`"hour";r=%d;t=%d`, s.limit-s.used, reset))
	if status != http.StatusOK {
		w.Header().Set("Retry-After", strconv.FormatInt(reset, 10))
	}
	w.WriteHeader(status)
}

// sendPoints sends through c a request of points, which it declares as
// its cost and tells pointsServer, and returns its status.
func sendPoints(c *http.Client, ctx context.Context, points int64) (int, error) {
	req, _ := http.NewRequestWithContext(polite.WithCost(ctx, polite.Cost{Unit: "points", Amount: points}), http.MethodPost, "http://api.example/graphql", nil)
	req.Header.Set("X-Test-Points", strconv.FormatInt(points, 10))
	return statusOf(c, req)
}

// A quota of 5,000 points an hour, 4,900 of them spent, then 11 minutes
// idle, past the default IdleTTL: the key is kept until the hour ends, and
// the next request of 500 points is held as it was while the key was busy
// (with a *WaitError, its wait past MaxWait). Forgotten after IdleTTL,
// the key sent it as a fresh probe into the 100 points left, and the
// server refused it.
func TestIdleKeyKeepsSpentCostQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &pointsServer{limit: 5000, window: time.Hour}
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: srv}, MaxAttempts: 1}
		c := &http.Client{Transport: tr}
		if code, err := sendPoints(c, t.Context(), 4900); code != http.StatusOK {
			t.Fatalf("first request: %d, %v", code, err)
		}
		// Busy: a request of 500 points is held, not sent (it would
		// wait about an hour, past MaxWait).
		if code, err := sendPoints(c, t.Context(), 500); err == nil {
			t.Fatalf("second request, 100 points left: sent, got %d; want it held", code)
		}
		if srv.refused != 0 {
			t.Fatalf("%d refused while the key was busy", srv.refused)
		}
		// Eleven minutes idle: the hour's quota still has 100 points left.
		time.Sleep(11 * time.Minute)
		code, err := sendPoints(c, t.Context(), 500)
		t.Logf("after 11 min idle: status %d, err %v", code, err)
		if srv.refused != 0 {
			t.Errorf("the server refused %d request(s) after the key went idle for 11 minutes: the stated points quota (100 of 5,000 left, reset in 49 min) was forgotten", srv.refused)
		}
	})
}
