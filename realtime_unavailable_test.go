package polite_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// TestRealTimeUnavailable runs 200 tasks over 16 workers through a polite
// client, in real time over loopback, against an honest server of 20 per
// 2s behind a load balancer that sheds one request in twenty with 503
// Retry-After: 1, or that answers every request with a bare 503 from 4s to
// 10s (an outage). It takes about a minute and a half: run it with
// -realtime 1 (and -realtimecase S for the cases whose name holds S). The
// ideal of the outage is the server's plus the outage's 6s.
func TestRealTimeUnavailable(t *testing.T) {
	if *realtime == 0 {
		t.Skip("-realtime not set")
	}
	for _, d := range []ratelimittest.Dialect{ratelimittest.IETF, ratelimittest.GitHub} {
		for _, mode := range []string{"shed", "down"} {
			name := string(d) + " " + mode
			if !strings.Contains(name, *realtimeCase) {
				continue
			}
			for range *realtime {
				cfg := ratelimittest.Config{Policies: []ratelimittest.Policy{{Name: "api", Quota: 20, Window: 2 * time.Second}}, Dialect: d, Latency: 5 * time.Millisecond}
				h := ratelimittest.NewHandler(cfg)
				var mu sync.Mutex
				n, unavailable := 0, 0
				start := time.Now()
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					n++
					since := time.Since(start)
					refuse := mode == "shed" && n%20 == 0 || mode == "down" && since >= 4*time.Second && since < 10*time.Second
					if refuse {
						unavailable++
					}
					mu.Unlock()
					if refuse {
						if mode == "shed" {
							w.Header().Set("Retry-After", "1")
						}
						w.WriteHeader(http.StatusServiceUnavailable)
						return
					}
					h.ServeHTTP(w, r)
				}))
				c := &http.Client{Transport: &polite.Transport{}}
				tasks := make(chan struct{}, 200)
				for range 200 {
					tasks <- struct{}{}
				}
				close(tasks)
				var wg sync.WaitGroup
				failed := 0
				for range 16 {
					wg.Go(func() {
						for range tasks {
							resp, err := c.Get(srv.URL)
							if err == nil {
								resp.Body.Close()
							}
							if err != nil || resp.StatusCode != http.StatusOK {
								mu.Lock()
								failed++
								mu.Unlock()
							}
						}
					})
				}
				wg.Wait()
				took := time.Since(start)
				srv.Close()
				ideal := ratelimittest.Ideal(cfg, 200, 16)
				if mode == "down" {
					ideal += 6 * time.Second
				}
				t.Logf("%s: 503s %d, refused %d, failed %d, took %v, ideal %v, efficiency %.2f", name, unavailable, h.Stats().Refused, failed, took.Round(10*time.Millisecond), ideal, ideal.Seconds()/took.Seconds())
				if failed > 0 {
					t.Errorf("%s: %d tasks failed", name, failed)
				}
			}
		}
	}
}
