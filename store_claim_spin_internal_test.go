package polite

import (
	"context"
	"errors"
	"math"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// timeoutStore fails, while failing, after a timeout of its own (5 s), as
// Budget.failed's doc describes ("a Store that failed slowly, after a 5 s
// timeout"): a partition, a client's dial timeout. It records which
// request (by a context value) called it last.
type timeoutStore struct {
	m       MemoryStore
	failing atomic.Bool
	calls   atomic.Int64
	last    atomic.Int64 // id of the request that called last
}

type reqID struct{}

var errTimedOut = errors.New("store down (timed out)")

func (s *timeoutStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	if s.failing.Load() {
		s.calls.Add(1)
		if id, ok := ctx.Value(reqID{}).(int64); ok {
			s.last.Store(id)
		}
		select {
		case <-time.After(5 * time.Second):
			return errTimedOut
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.m.Update(ctx, key, fn)
}

func (s *timeoutStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	if s.failing.Load() {
		return errTimedOut
	}
	return s.m.Wait(ctx, key, gen, until)
}

// spinScenario: two requests held by the fallback for an hour's pause while
// a Store that fails after 5 s is down. Both first call the Store at t0
// (failing at t0+5s), so the retry instant r is t0+6s. At r one of them
// claims r and calls the Store; the other looks again a second on, while
// that call still runs, and sleeps until the next second: it spun there,
// its next look already past, until the retry instant changed. If
// cancelClaimer, the claimer's caller gives up at r+0.5s: its Store call
// ends with ctx's error, which records no failure, and r never changes.
//
// In a bubble the clock stops once a goroutine never blocks: a real-time
// watchdog (not a pacing measurement) sees the bubble stuck, then breaks
// the loop by moving the retry instant past the pause.
func spinScenario(t *testing.T, cancelClaimer bool) {
	var (
		bubbleDone = make(chan struct{})
		a          = &Budget{}
		st         = &timeoutStore{}
		fakeNow    atomic.Int64
		t0n        atomic.Int64
	)
	a.Store = st
	go func() {
		defer close(bubbleDone)
		synctest.Test(t, func(t *testing.T) {
			a.init()
			base := roundTripper(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			c := &http.Client{Transport: &Transport{Base: base, Budget: a, MaxAttempts: 1, MaxWait: 2 * time.Hour}}
			k := originKey("http", "api.test")
			t0 := time.Now()
			t0n.Store(t0.UnixNano())
			st.m.Update(t.Context(), k.m.String(), func(s *KeyState) {
				s.c.PauseUntil(t0, &a.cfg, t0.Add(time.Hour), control.ReasonRetryAfter)
			})
			var g lease
			if _, ok, _, _ := a.acquire(t.Context(), k, t0, control.Ask{}, &g); ok {
				t.Error("granted inside the Store's pause")
				return
			}
			st.failing.Store(true)
			done := make(chan struct{}, 2)
			var cancels [2]context.CancelFunc
			for i := range 2 {
				ctx, cancel := context.WithCancel(context.WithValue(context.Background(), reqID{}, int64(i)))
				cancels[i] = cancel
				go func() {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
					resp, err := c.Do(req)
					if err == nil {
						resp.Body.Close()
					}
					done <- struct{}{}
				}()
			}
			if cancelClaimer {
				time.Sleep(6*time.Second + 500*time.Millisecond)
				claimer := st.last.Load()
				t.Logf("+%v: the claimer (request %d) gives up while asking the Store", time.Since(t0), claimer)
				cancels[claimer]()
			}
			for n := 0; n < 2; {
				fakeNow.Store(time.Now().UnixNano())
				select {
				case <-done:
					n++
				case <-time.After(100 * time.Millisecond):
				}
			}
			for _, c := range cancels {
				c()
			}
		})
	}()
	select {
	case <-bubbleDone:
		return
	case <-time.After(30 * time.Second): // real time: a watchdog only
	}
	stuck := time.Duration(fakeNow.Load() - t0n.Load())
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "select") && !strings.Contains(g, "chan receive") {
			if i := strings.Index(g, "budget.go"); i >= 0 {
				t.Logf("running goroutine in Budget.wait:\n%s", g[:min(len(g), i+200)])
			}
		}
	}
	calls := st.calls.Load()
	a.down.Store(math.MaxInt64 / 2) // break the loop
	select {
	case <-bubbleDone:
	case <-time.After(10 * time.Second):
		t.Fatal("bubble still running after the retry instant moved")
	}
	t.Errorf("a request held by the fallback spins in Budget.wait without blocking: the bubble's clock stopped at t0+%v "+
		"(r = t0+6s; %d Store calls) for 30 s of real time", stuck.Round(100*time.Millisecond), calls)
}

func TestFallbackWaiterSleepsWhileClaimerCallsSlowStore(t *testing.T) {
	spinScenario(t, false)
}

func TestFallbackWaiterSleepsWhenClaimerGivesUp(t *testing.T) {
	spinScenario(t, true)
}
