package polite_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// As TestBlipNoGiveUpWithoutOutage, for RetryTransient: a flight of 100
// GETs answered 502 once (a one-second gateway blip) is no outage, and the
// budget spaces the retries, not drops them, at a MaxWait below its
// longest spacing: 45 of 100 were given back at a MaxWait of 8 s, 51 at
// 5 s.
func TestTransientBlipNoGiveUpWithoutOutage(t *testing.T) {
	for _, maxWait := range []time.Duration{8 * time.Second, 5 * time.Second} {
		t.Run(maxWait.String(), func(t *testing.T) {
			blipNoGiveUp(t, &polite.Transport{MaxWait: maxWait, RetryTransient: true}, 300*time.Millisecond, http.StatusBadGateway, nil, 75, 0)
		})
	}
}

// As TestTransientBlipNoGiveUpWithoutOutage, each request under a context
// deadline 2.1 s past MaxWait, a second away: a retry the budget affords
// within MaxWait and the deadline waits until it does, and none goes back
// as a give-up for the budget, nor fails. Held to MaxWait instead (once
// the budget's wait had to leave half of the deadline's time), 60 of 100
// woke together with no wait left for the key's probe and ramp, and
// failed with a *WaitError. A retry the budget cannot space within
// MaxWait waits MaxWait (see DESIGN.md, "The retry budget": a transient
// failure's retries are not given the room a refusal's are): with the
// deadline exactly 2 s past MaxWait, its answer and its deadline fell at
// one instant of the bubble, and which came first was a select's choice,
// so that 73 to 100 of the flight were served from run to run under -race.
// The extra 100 ms takes that tie away.
func TestTransientBlipWithinDeadline(t *testing.T) {
	for _, c := range []struct{ maxWait, timeout time.Duration }{
		{8 * time.Second, 10100 * time.Millisecond},
		{10 * time.Second, 12100 * time.Millisecond},
	} {
		t.Run(c.maxWait.String()+"/"+c.timeout.String(), func(t *testing.T) {
			blipNoGiveUp(t, &polite.Transport{MaxWait: c.maxWait, RetryTransient: true}, time.Second, http.StatusBadGateway, nil, 100, c.timeout)
		})
	}
}

// Request A is refused at 10 ms with Retry-After: 61, past MaxWait (1 min):
// the key pauses until 61.010 s exactly. Request B, in flight with A, is
// refused at 1.005 s (bare, or Retry-After: 60): the key's pause, 60.005 s
// from then, passes B's MaxWait by 5 ms, less than the jitter of a
// quota's pause, and a first fix of that jitter (a reset of exactly
// MaxWait) set the pause to B's limit, 61.005 s: 5 ms before the wait the
// server gave A ended. A fresh request C, waiting on the pause, was sent
// then (and B's kept retry, which lost the probe to C, failed with a
// WaitError instead of returning its 429). That fix was taken back: its
// refusal goes back to the caller.
func TestOtherAnswersPauseNotCutForRetry(t *testing.T) {
	for _, bHeader := range []http.Header{{}, {"Retry-After": {"60"}}} {
		t.Run("B "+bHeader.Get("Retry-After"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				var (
					mu    sync.Mutex
					sends []time.Time
					tasks []string
					floor time.Time // the end of A's Retry-After
				)
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					task := req.Header.Get("X-Task")
					mu.Lock()
					sends, tasks = append(sends, time.Now()), append(tasks, task)
					mu.Unlock()
					switch task {
					case "A":
						time.Sleep(10 * time.Millisecond)
						mu.Lock()
						floor = time.Now().Add(61 * time.Second)
						mu.Unlock()
						return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"61"}}, Body: http.NoBody, Request: req}, nil
					case "B":
						time.Sleep(1005 * time.Millisecond)
						return &http.Response{StatusCode: 429, Header: bHeader.Clone(), Body: http.NoBody, Request: req}, nil
					}
					time.Sleep(100 * time.Millisecond)
					return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
				})
				tr := &polite.Transport{Base: base, MaxWait: time.Minute}
				if st := run(t, &http.Client{Transport: tr}, "http://api.test/", 400, 8); st[200] != 400 {
					t.Fatalf("warm-up: %v", st)
				}
				mu.Lock()
				sends, tasks = nil, nil
				mu.Unlock()
				t0 := time.Now()
				outcome := map[string]string{}
				do := func(task string) {
					req, _ := http.NewRequest("GET", "http://api.test/", nil)
					req.Header.Set("X-Task", task)
					resp, err := tr.RoundTrip(req)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						outcome[task] = err.Error()
						return
					}
					resp.Body.Close()
					outcome[task] = resp.Status
				}
				var wg sync.WaitGroup
				wg.Go(func() { do("A") })
				wg.Go(func() { do("B") })
				wg.Go(func() { time.Sleep(2 * time.Second); do("C") })
				wg.Wait()
				mu.Lock()
				defer mu.Unlock()
				if len(sends) < 2 || tasks[0] == tasks[1] {
					t.Fatalf("A and B not in flight together: %v", tasks)
				}
				for i, at := range sends[2:] {
					if at.Before(floor) {
						t.Errorf("%s sent at %v, %v before A's Retry-After: 61 ends (%v); B: %s",
							tasks[i+2], at.Sub(t0), floor.Sub(at), floor.Sub(t0), outcome["B"])
					}
				}
			})
		})
	}
}

// A gateway in front of the origin fails: every request is answered 502
// for a minute. Callers keep sending (20 workers, each request under an
// http.Client-style deadline of 3 s), the Transport retrying transient
// failures. Transient failures never pause the key nor count toward an
// outage, so the retry budget (a fifth of first attempts plus 2 a second,
// 20 banked, 20 owed) is the only thing between those callers and a
// multiplied load. Over the minute it allows at most
// 20 + 20 + 2*60 + 0.2*firsts retries. A retry the budget would space
// past its deadline is given back, not sent at its own wait as a
// refusal's is: sent so, the callers sent 2.4 requests each, 964 retries
// of 678 first attempts where the budget allows 295.
func TestTransientRetriesBoundedByBudgetUnderShortDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		var down sync.Mutex
		failing := false
		srv := &rvServer{latency: 50 * time.Millisecond, answer: func(task string, n int, _ time.Time) (int, http.Header) {
			down.Lock()
			defer down.Unlock()
			if failing {
				return http.StatusBadGateway, nil
			}
			return 200, rvRoomy()
		}}
		tr := &polite.Transport{Base: srv, RetryTransient: true}
		if st := run(t, &http.Client{Transport: tr}, "http://api.test/", 3000, 400); st[200] != 3000 {
			t.Fatalf("warm-up: %v", st)
		}
		srv.mu.Lock()
		srv.sends, srv.n = nil, nil
		srv.mu.Unlock()
		down.Lock()
		failing = true
		down.Unlock()
		end := time.Now().Add(time.Minute)
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			firsts int
		)
		for w := range 20 {
			wg.Go(func() {
				for i := 0; time.Now().Before(end); i++ {
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
					req, _ := http.NewRequestWithContext(ctx, "GET", "http://api.test/", nil)
					req.Header.Set("X-Task", "w"+strconv.Itoa(w)+"-"+strconv.Itoa(i))
					mu.Lock()
					firsts++
					mu.Unlock()
					resp, err := tr.RoundTrip(req)
					if err == nil {
						resp.Body.Close()
					}
					cancel()
					// In the outage, a request its origin's pause
					// holds past its deadline fails at once: the
					// caller comes back when the pause ends.
					var we *polite.WaitError
					if errors.As(err, &we) {
						time.Sleep(time.Until(we.Until))
					}
				}
			})
		}
		wg.Wait()
		srv.mu.Lock()
		sends := 0
		for task, n := range srv.n {
			if strings.HasPrefix(task, "w") {
				sends += n
			}
		}
		srv.mu.Unlock()
		retries := sends - firsts
		bound := 20 + 20 + 2*60 + firsts/5
		t.Logf("%d first attempts, %d retries (budget bound %d), %.2f sends per request", firsts, retries, bound, float64(sends)/float64(firsts))
		if retries > bound {
			t.Errorf("%d retries of %d first attempts to a key answering 502 for a minute, beyond the retry budget's %d: with deadlines of 3 s the budget no longer bounds transient retries, which nothing else spaces", retries, firsts, bound)
		}
	})
}
