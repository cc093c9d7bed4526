package polite_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// counter counts the requests a handler serves and the most in flight at
// once; each takes latency.
type counter struct {
	latency           time.Duration
	n, inflight, peak atomic.Int64
	mu                sync.Mutex
	perClient         map[string]int
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	in := c.inflight.Add(1)
	for {
		p := c.peak.Load()
		if in <= p || c.peak.CompareAndSwap(p, in) {
			break
		}
	}
	c.mu.Lock()
	if c.perClient == nil {
		c.perClient = map[string]int{}
	}
	c.perClient[r.Header.Get("X-Client")]++
	c.mu.Unlock()
	time.Sleep(c.latency)
	c.inflight.Add(-1)
}

// loop sends GETs to url through tr from workers goroutines until d has
// passed, each request bounded by that deadline, and returns how many
// were answered.
func loop(t *testing.T, tr http.RoundTripper, url, client string, workers int, d time.Duration) int64 {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	var (
		ok atomic.Int64
		wg sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				req.Header.Set("X-Client", client)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					return // the deadline: a WaitError or the context's error
				}
				resp.Body.Close()
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	return ok.Load()
}

// sharing returns two Transports over one Budget, each with its own
// ceilings.
func sharing(base http.RoundTripper, b *polite.Budget, rate [2]float64, conc [2]int) [2]*polite.Transport {
	return [2]*polite.Transport{
		{Base: base, Budget: b, MaxRate: rate[0], MaxConcurrency: conc[0]},
		{Base: base, Budget: b, MaxRate: rate[1], MaxConcurrency: conc[1]},
	}
}

// both runs loop on the two Transports at once, as clients "a" and "b".
func both(t *testing.T, trs [2]*polite.Transport, url string, workers int, d time.Duration) {
	var wg sync.WaitGroup
	for i, tr := range trs {
		wg.Go(func() { loop(t, tr, url, string(rune('a'+i)), workers, d) })
	}
	wg.Wait()
}

func TestLocalCeilingsPerTransport(t *testing.T) {
	// Two Transports on one Budget, MaxRate 5 and 10: each keeps its own
	// ceiling, whatever the other's; the server sees at most 5·2+1 and
	// 10·2+1 requests in 2s. MaxConcurrency 2 and 3: at most 5 in flight.
	synctest.Test(t, func(t *testing.T) {
		srv := &counter{latency: time.Millisecond}
		trs := sharing(&ratelimittest.Transport{Handler: srv}, &polite.Budget{}, [2]float64{5, 10}, [2]int{})
		both(t, trs, "http://api.test/", 4, 2*time.Second)
		if n := srv.n.Load(); n > 32 || srv.perClient["a"] > 11 || srv.perClient["b"] > 21 || srv.perClient["a"] < 9 || srv.perClient["b"] < 19 {
			t.Errorf("server saw %d requests (%v), want at most 32: about 10 at MaxRate 5 and 20 at MaxRate 10", n, srv.perClient)
		}

		srv = &counter{latency: 100 * time.Millisecond}
		trs = sharing(&ratelimittest.Transport{Handler: srv}, &polite.Budget{}, [2]float64{}, [2]int{2, 3})
		both(t, trs, "http://api.test/", 8, 2*time.Second)
		if p := srv.peak.Load(); p > 5 || p < 4 {
			t.Errorf("peak in flight %d, want 5 (2 + 3) at most, and the ceilings reached", p)
		}
	})
}

func TestBudgetCeilings(t *testing.T) {
	// Budget.MaxRate and MaxConcurrency bound all its Transports together.
	synctest.Test(t, func(t *testing.T) {
		srv := &counter{latency: time.Millisecond}
		trs := sharing(&ratelimittest.Transport{Handler: srv}, &polite.Budget{MaxRate: 5}, [2]float64{}, [2]int{})
		both(t, trs, "http://api.test/", 4, 2*time.Second)
		if n := srv.n.Load(); n > 11 || n < 9 {
			t.Errorf("server saw %d requests in 2s, want about 10 at Budget.MaxRate 5", n)
		}

		srv = &counter{latency: 100 * time.Millisecond}
		trs = sharing(&ratelimittest.Transport{Handler: srv}, &polite.Budget{MaxConcurrency: 2}, [2]float64{}, [2]int{})
		both(t, trs, "http://api.test/", 8, 2*time.Second)
		if p := srv.peak.Load(); p != 2 {
			t.Errorf("peak in flight %d, want Budget.MaxConcurrency 2", p)
		}
	})
}

// TestLocalCeilingsLoopback is TestLocalCeilingsPerTransport over real
// sockets, in real time (4 seconds).
func TestLocalCeilingsLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("4 seconds of real time over loopback")
	}
	srv := &counter{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	base := &http.Transport{MaxIdleConnsPerHost: 16}
	defer base.CloseIdleConnections()
	trs := sharing(base, &polite.Budget{}, [2]float64{5, 10}, [2]int{})
	both(t, trs, hs.URL, 4, 2*time.Second)
	t.Logf("MaxRate 5 and 10 on one Budget, 2s: server saw %d requests %v", srv.n.Load(), srv.perClient)
	if n := srv.n.Load(); n > 32 {
		t.Errorf("server saw %d requests, want at most 32", n)
	}

	srv2 := &counter{latency: 50 * time.Millisecond}
	hs2 := httptest.NewServer(srv2)
	defer hs2.Close()
	trs = sharing(base, &polite.Budget{}, [2]float64{}, [2]int{2, 3})
	both(t, trs, hs2.URL, 8, 2*time.Second)
	t.Logf("MaxConcurrency 2 and 3 on one Budget, 2s: peak in flight %d (%d requests)", srv2.peak.Load(), srv2.n.Load())
	if p := srv2.peak.Load(); p > 5 {
		t.Errorf("peak in flight %d, want at most 5", p)
	}
}
