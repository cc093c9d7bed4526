package polite_test

import (
	"net/http"
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
			blipNoGiveUp(t, &polite.Transport{MaxWait: maxWait, RetryTransient: true}, http.StatusBadGateway, nil, false, 0)
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
