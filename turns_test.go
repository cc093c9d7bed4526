package polite_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// TestTurnsBoundTheLongestWait runs 16 workers through 200 tasks against
// servers that state their quota, 20 per 4s: held requests start in the
// order they first asked (control's turn.go), so no task waits much more
// than the window it was held for. Before turns, the request that lost
// the race at each window's start could lose it again: the longest task
// took 16s (a fixed window) and 12s (a token bucket), where most took
// one window.
func TestTurnsBoundTheLongestWait(t *testing.T) {
	for _, a := range []ratelimittest.Algorithm{ratelimittest.FixedWindow, ratelimittest.TokenBucket} {
		t.Run(string(a), func(t *testing.T) {
			cfg := ratelimittest.Config{
				Policies: []ratelimittest.Policy{{Name: "api", Algorithm: a, Quota: 20, Window: 4 * time.Second}},
				Dialect:  ratelimittest.IETF, Latency: 5 * time.Millisecond,
			}
			synctest.Test(t, func(t *testing.T) {
				time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
				c, _ := politeOver(ratelimittest.NewHandler(cfg))
				statuses, longest := runLongest(t, c, "http://api.test/", 200, 16)
				if statuses[http.StatusOK] != 200 {
					t.Fatalf("statuses %v, want 200 ok", statuses)
				}
				if limit := 4*time.Second + 500*time.Millisecond; longest > limit {
					t.Errorf("the longest task took %v, want at most %v (a window and a half second)", longest, limit)
				}
			})
		})
	}
}

// TestTurnPassesWhenItsRequestGivesUp checks that a held request whose
// context ends gives up its place at once: the request held behind it
// goes at the instant the hold ends, not a grace later.
func TestTurnPassesWhenItsRequestGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
		start := time.Now()
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 1, Window: time.Second}},
			Dialect:  ratelimittest.IETF,
		})
		var (
			mu      sync.Mutex
			arrived []time.Duration
		)
		c, _ := politeOver(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			arrived = append(arrived, time.Since(start))
			mu.Unlock()
			h.ServeHTTP(w, r)
		}))
		get := func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			resp, err := c.Do(req)
			if err != nil {
				return err
			}
			io.Copy(io.Discard, resp.Body)
			return resp.Body.Close()
		}
		if err := get(t.Context()); err != nil { // spends the window's one request
			t.Fatal(err)
		}
		// a, held to the next window at 1s, claims it; b, younger, is
		// held behind a; a gives up at 500ms.
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 2)
		go func() { done <- get(ctx) }()
		time.Sleep(100 * time.Millisecond)
		go func() { done <- get(t.Context()) }()
		time.Sleep(400 * time.Millisecond)
		cancel()
		for range 2 {
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(arrived) != 2 || arrived[1] >= time.Second+50*time.Millisecond {
			t.Errorf("requests arrived at %v, want b at the window's start, before a grace (50ms) past it", arrived)
		}
	})
}

// TestPaceKeepsOrder checks that requests a MaxRate holds start in the
// order they were first held, whether the Budget's MaxRate or the
// Transport's holds them: 12 held at once, then one newcomer every 250ms,
// at 2 a second. The Transport's held requests raced for each start
// before: the first held started 27th.
func TestPaceKeepsOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		tr   func(http.RoundTripper) *polite.Transport
	}{
		{"Budget.MaxRate", func(b http.RoundTripper) *polite.Transport {
			return &polite.Transport{Base: b, Budget: &polite.Budget{MaxRate: 2}}
		}},
		{"Transport.MaxRate", func(b http.RoundTripper) *polite.Transport { return &polite.Transport{Base: b, MaxRate: 2} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					mu    sync.Mutex
					order []int
				)
				tr := c.tr(roundTripFunc(func(r *http.Request) (*http.Response, error) {
					id, _ := strconv.Atoi(r.Header.Get("X-Id"))
					mu.Lock()
					order = append(order, id)
					mu.Unlock()
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				}))
				send := func(id int) {
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
					req.Header.Set("X-Id", strconv.Itoa(id))
					resp, err := tr.RoundTrip(req)
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				}
				send(-1)
				time.Sleep(10 * time.Second)
				var wg sync.WaitGroup
				const held, later = 12, 20
				for i := range held {
					wg.Go(func() { send(i) })
					time.Sleep(time.Millisecond)
				}
				for i := held; i < held+later; i++ {
					wg.Go(func() { send(i) })
					time.Sleep(250 * time.Millisecond)
				}
				wg.Wait()
				pos := map[int]int{}
				for p, id := range order {
					pos[id] = p
				}
				for i := range held {
					for j := i + 1; j < held+later; j++ {
						if pos[j] < pos[i] {
							t.Fatalf("start order %v: %d before %d, which was held first", order, j, i)
						}
					}
				}
			})
		})
	}
}

// TestPaceOrderBoundsTheWait checks what the order is for: under a steady
// load that first come, first served keeps within MaxWait (a backlog of
// 12 at 2 a second, each waiting about 6s, MaxWait 8s), no request held by
// the Transport's MaxRate fails. 7 of 52 failed with a *WaitError before,
// overtaken by requests that asked after them.
func TestPaceOrderBoundsTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{MaxRate: 2, MaxWait: 8 * time.Second, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		var failed atomic.Int32
		send := func() {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				failed.Add(1)
				return
			}
			resp.Body.Close()
		}
		send()
		time.Sleep(10 * time.Second)
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(send)
		}
		for range 40 {
			time.Sleep(500 * time.Millisecond)
			wg.Go(send)
		}
		wg.Wait()
		if n := failed.Load(); n > 0 {
			t.Errorf("%d of 52 requests failed with MaxWait 8s; in the order they asked, each waits about 6s", n)
		}
	})
}

// TestPaceTurnPassesWhenItsRequestGivesUp checks that a request the
// Transport's MaxRate holds gives up its place in line when its context
// ends, wherever it stands: those behind it go at the pace, one a second,
// not a MaxWait later.
func TestPaceTurnPassesWhenItsRequestGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var (
			mu   sync.Mutex
			sent = map[int]time.Duration{}
		)
		tr := &polite.Transport{MaxRate: 1, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			id, _ := strconv.Atoi(r.Header.Get("X-Id"))
			mu.Lock()
			sent[id] = time.Since(start)
			mu.Unlock()
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		send := func(ctx context.Context, id int) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			req.Header.Set("X-Id", strconv.Itoa(id))
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		send(t.Context(), 0) // at 0: the next start at 1s
		var wg sync.WaitGroup
		for i := 1; i <= 4; i++ {
			ctx := t.Context()
			if i == 1 || i == 3 { // the first in line, and one in the middle, give up at 500ms
				c, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
				defer cancel()
				ctx = c
			}
			wg.Go(func() { send(ctx, i) })
			time.Sleep(time.Millisecond)
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		want := map[int]time.Duration{0: 0, 2: time.Second, 4: 2 * time.Second}
		if !maps.Equal(sent, want) {
			t.Errorf("sent at %v, want %v", sent, want)
		}
	})
}
