package polite_test

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A request Restraint held was not woken when Restraint lifted, if the
// request whose answer stated the quota had its slot freed already by its
// lease: Restraint{MaxConcurrency: 1}, Budget.Lease one minute; a takes
// 90 s, its lease frees its slot to b (a long request) at 60 s, c waits
// behind b; a's answer at 90 s states a quota, but the end of a request
// no longer counted was the only change looked at, and c waited until b's
// lease ended.
func TestRestraintLiftWakesAfterLeaseEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		var mu sync.Mutex
		started := map[string]time.Duration{}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			started[r.URL.Path] = time.Since(t0)
			mu.Unlock()
			switch r.URL.Path {
			case "/a":
				time.Sleep(90 * time.Second)
				w.Header().Set("RateLimit-Policy", `"hour";q=100000;w=3600`)
				w.Header().Set("RateLimit", `"hour";r=99999;t=3600`)
			case "/b":
				time.Sleep(10 * time.Minute)
			}
			io.WriteString(w, "ok")
		})
		tr := &polite.Transport{
			Base:      &ratelimittest.Transport{Handler: h},
			Restraint: &polite.Restraint{MaxConcurrency: 1},
			Budget:    &polite.Budget{Lease: time.Minute},
			MaxWait:   time.Hour,
		}
		get := func(p string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://origin.example"+p, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		var wg sync.WaitGroup
		wg.Go(func() { get("/a") })
		time.Sleep(time.Second)
		wg.Go(func() { get("/b") })
		time.Sleep(time.Second)
		wg.Go(func() { get("/c") })
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		t.Logf("starts: %v", started)
		if started["/b"] > 90*time.Second {
			t.Fatalf("setup: b started at %v, want after a's lease ended (60 s), before a's answer (90 s)", started["/b"])
		}
		if c := started["/c"]; c > 91*time.Second {
			t.Errorf("c started at %v; Restraint lifted at 90 s when a's answer stated a quota, and c should have been woken then", c)
		}
	})
}
