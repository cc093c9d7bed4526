package polite_test

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

type shed503 struct {
	h     http.Handler
	every int
	mu    sync.Mutex
	n     int
	shed  int
}

func (s *shed503) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.n++
	refuse := s.every > 0 && s.n%s.every == 0
	if refuse {
		s.shed++
	}
	s.mu.Unlock()
	if refuse {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	s.h.ServeHTTP(w, r)
}

func TestLBTmp(t *testing.T) {
	for _, alg := range []ratelimittest.Algorithm{ratelimittest.FixedWindow, ratelimittest.TokenBucket, ratelimittest.SlidingWindow} {
		for _, d := range []ratelimittest.Dialect{ratelimittest.IETF, ratelimittest.GitHub, ratelimittest.OpenAI} {
			cfg := ratelimittest.Config{Policies: []ratelimittest.Policy{{Name: "api", Algorithm: alg, Quota: 20, Window: 4 * time.Second}}, Dialect: d, Latency: 50 * time.Millisecond}
			for _, every := range []int{0, 20} {
				var took time.Duration
				var refused, shed, ok int
				synctest.Test(t, func(t *testing.T) {
					time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
					h := ratelimittest.NewHandler(cfg)
					s := &shed503{h: h, every: every}
					c, _ := politeOver(s)
					start := time.Now()
					st := run(t, c, "http://api.test/", 200, 16)
					took = time.Since(start)
					refused, shed, ok = h.Stats().Refused, s.shed, st[200]
				})
				ideal := ratelimittest.Ideal(cfg, 200, 16)
				t.Logf("%v %v shed 1/%d: ok %d refused %d shed %d took %v ideal %v eff %.3f", alg, d, every, ok, refused, shed, took.Round(time.Millisecond), ideal, float64(ideal)/float64(took))
			}
		}
	}
}
