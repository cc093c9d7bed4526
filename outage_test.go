package polite_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A lone request (nothing else in flight, the retry budget full) refused
// six times with Retry-After: 1, then served, gets its 200 on its 7th
// attempt: MaxAttempts is 8 (the default), MaxWait 10 minutes. With the
// outage at 5 refused flights (baf34ad), each lone refusal a flight, the
// 6th refusal went back as a give-up for the retry budget.
func TestLoneRequestMaxAttemptsNotCutByOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		var mu sync.Mutex
		n := 0
		tr := &polite.Transport{Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			n++
			k := n
			mu.Unlock()
			if k <= 6 {
				return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"1"}}, Body: http.NoBody, Request: req}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
		})}
		ev := &events{}
		tr.OnEvent = ev.on
		req, _ := http.NewRequest("GET", "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for _, e := range ev.of(polite.EventGiveUp) {
			t.Logf("give-up: attempt %d, reason %s", e.Attempt, e.Reason)
		}
		if resp.StatusCode != 200 {
			t.Errorf("status %d after %d attempts; want 200 on attempt 7 (MaxAttempts 8, retry budget full)", resp.StatusCode, n)
		}
	})
}

// A 502 whose retry cannot fit MaxWait because the key is already paused
// (another request's 429, Retry-After: 30, MaxWait 10s) goes back to the
// caller as it is, as a refusal does in the same case. Before, the 502
// was drained, an EventRetry reported, and the caller got a *WaitError
// for a retry never sent.
func TestTransientRetryIntoKnownPauseGoesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		release := make(chan struct{})
		tr := &polite.Transport{MaxWait: 10 * time.Second, RetryTransient: true,
			Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
				switch req.Header.Get("X-Task") {
				case "A":
					<-release
					return &http.Response{StatusCode: 502, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
				case "B":
					return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"30"}}, Body: http.NoBody, Request: req}, nil
				}
				return &http.Response{StatusCode: 200, Header: quotaHeader(), Body: http.NoBody, Request: req}, nil
			})}
		ev := &events{}
		tr.OnEvent = ev.on
		// Warm the key up so that two requests may be in flight.
		for range 3 {
			req, _ := http.NewRequest("GET", "http://api.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		var (
			wg    sync.WaitGroup
			respA *http.Response
			errA  error
		)
		wg.Go(func() {
			req, _ := http.NewRequest("GET", "http://api.test/", nil)
			req.Header.Set("X-Task", "A")
			respA, errA = tr.RoundTrip(req)
		})
		synctest.Wait() // A is in flight
		req, _ := http.NewRequest("GET", "http://api.test/", nil)
		req.Header.Set("X-Task", "B")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close() // 429 back: 30s > MaxWait; the key pauses ~30s
		close(release)
		wg.Wait()
		for _, e := range ev.all {
			if e.Kind != polite.EventObserve {
				t.Logf("event %s attempt %d status %d wait %v reason %s", e.Kind, e.Attempt, e.Status, e.Wait, e.Reason)
			}
		}
		if errA != nil {
			t.Errorf("A: %v; want its 502 back (the key's pause was known at the 502 and past MaxWait)", errA)
			return
		}
		respA.Body.Close()
		if respA.StatusCode != 502 {
			t.Errorf("A: status %d, want 502", respA.StatusCode)
		}
	})
}

// quotaHeader states a roomy quota, so that a key lets many requests go.
func quotaHeader() http.Header {
	return http.Header{"Ratelimit-Policy": {`"d";q=1000;w=60`}, "Ratelimit": {`"d";r=900;t=60`}}
}

// A fixed window of 10 a minute that states nothing (a bare 429, no
// Retry-After), 4 workers, 40 tasks: the tasks are served within MaxWait
// (10 minutes) by waiting for the window to reset, and none is given up
// for an outage. With the outage at 5 (or 16) refused flights, the
// learner's probes measuring the window made an outage, and tasks got 429s
// back. A request that is the learner's probe at each of its 8 attempts
// spent them in about 34 s, before the window ended, and was given up
// after its last (about 6 runs in 1,000); its attempts now spread over
// what it may wait (DESIGN.md §6, "a probe spends an attempt"), and that
// give-up is still the only one allowed.
func TestBare429LongWindowNoOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		ev := &events{}
		tr := &polite.Transport{Base: bareServer(ratelimittest.FixedWindow, time.Minute), OnEvent: ev.on}
		statuses := run(t, &http.Client{Transport: tr}, "http://api.test/", 40, 4)
		gaveUp := ev.of(polite.EventGiveUp)
		for _, e := range gaveUp {
			if e.Reason != polite.ReasonBackoff || e.Attempt != 8 {
				t.Errorf("given up at attempt %d, reason %s; want only a request whose 8 attempts were all probes (reason backoff)", e.Attempt, e.Reason)
			}
		}
		if statuses[200]+len(gaveUp) != 40 || statuses[429] != len(gaveUp) {
			t.Errorf("statuses %v, %d given up; want 40 served but for those given up after their 8th attempt (MaxWait 10m)", statuses, len(gaveUp))
		}
	})
}

// One answer whose Date lies (an hour behind) followed by a refusal with
// no Date asking, by HTTP-date, for 5 seconds: the wait is the shorter of
// the date measured from the key's estimate of the server's clock and from
// the client's. Measured from the estimate alone (baf34ad), which the one
// lying Date threw an hour back, the key paused an hour.
func TestOneLyingDateDoesNotLockOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		n := 0
		tr := &polite.Transport{MaxWait: time.Minute, Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			n++
			h := quotaHeader()
			switch n {
			case 1:
				h.Set("Date", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)) // the lie
			case 2:
				h = http.Header{"Retry-After": {time.Now().Add(5 * time.Second).UTC().Format(http.TimeFormat)}}
				return &http.Response{StatusCode: 429, Header: h, Body: http.NoBody, Request: req}, nil
			default:
				h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
			}
			return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: req}, nil
		})}
		for i := range 3 {
			st := time.Now()
			req, _ := http.NewRequest("GET", "http://api.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Errorf("request %d: %v after %v; the server asked for 5 s", i+1, err, time.Since(st))
				continue
			}
			resp.Body.Close()
			t.Logf("request %d: %d after %v", i+1, resp.StatusCode, time.Since(st))
			if i >= 1 && (resp.StatusCode != 200 || time.Since(st) > 10*time.Second) {
				t.Errorf("request %d: %d after %v; want 200 after about 5 s", i+1, resp.StatusCode, time.Since(st))
			}
		}
	})
}

// A server that refuses everything, giving no usable wait (a bare 429, or
// a Retry-After polite ignores), and a caller looping on one client with
// two minutes' deadline a request: once the key is in an outage, its pause
// doubles with each refused flight up to a minute, as with Retry-After: 0.
// Before, each new request started its own backoff again at a second, and
// the server got about one request a second for as long as it refused.
func TestOutageWithoutWaitBacksOff(t *testing.T) {
	for _, tt := range []struct {
		name string
		h    http.Header
	}{
		{"bare 429", nil},
		{"Retry-After: -1", http.Header{"Retry-After": {"-1"}}},
		{"Retry-After: 0", http.Header{"Retry-After": {"0"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				start := time.Now()
				var sent []time.Duration
				tr := &polite.Transport{Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
					sent = append(sent, time.Since(start))
					return &http.Response{StatusCode: 429, Header: tt.h.Clone(), Body: http.NoBody, Request: req}, nil
				})}
				callUntil(t, tr, start.Add(30*time.Minute), 2*time.Minute)
				late := 0
				for _, d := range sent {
					if d >= 20*time.Minute {
						late++
					}
				}
				t.Logf("%d requests in the last 10 of 30 minutes, %d in all", late, len(sent))
				// Doubling to a minute: about 10 in 10 minutes.
				if late > 20 {
					t.Errorf("%d requests in the last 10 of 30 minutes refused without a usable wait (%d in all); want about one a minute", late, len(sent))
				}
			})
		})
	}
}

// A server that refuses everything with a bare 429, called by callers that
// do not retry for ever (MaxAttempts 1, or a deadline of 5s a request): the
// key's wait doubles with each refused flight, whatever request it refused,
// as documented. Each fresh request waited its own first backoff instead,
// about a second: the server got one request a second until the outage
// rule began after 40 refused flights, then doubled it: 54 requests in 5
// minutes with MaxAttempts 1, 50 with 5s deadlines.
func TestRefusalsWithoutWaitDoubleAcrossRequests(t *testing.T) {
	for _, tt := range []struct {
		name        string
		maxAttempts int
		deadline    time.Duration
	}{
		{"MaxAttempts 1", 1, 0},
		{"5s deadlines", 0, 5 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				start := time.Now()
				var (
					mu   sync.Mutex
					sent []time.Duration
				)
				tr := &polite.Transport{MaxAttempts: tt.maxAttempts, Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
					mu.Lock()
					sent = append(sent, time.Since(start))
					mu.Unlock()
					return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
				})}
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() {
						for time.Since(start) < 5*time.Minute {
							ctx, cancel := context.WithCancel(t.Context())
							if tt.deadline > 0 {
								ctx, cancel = context.WithTimeout(t.Context(), tt.deadline)
							}
							req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
							resp, err := tr.RoundTrip(req)
							if err == nil {
								resp.Body.Close()
							} else {
								time.Sleep(100 * time.Millisecond) // an error at once: the caller thinks before its next
							}
							cancel()
						}
					})
				}
				wg.Wait()
				// Doubling from a second to a minute: 1+2+4+...+32+60+60+60 is
				// 243s for the first 10.
				if len(sent) > 15 {
					t.Errorf("%d requests in 5 minutes to a server refusing every one with a bare 429; want about 11 (the wait doubling)", len(sent))
				}
			})
		})
	}
}

// callUntil is a caller looping on tr until end: one GET after another,
// each with a context of timeout, a second apart after an error.
func callUntil(t *testing.T, tr *polite.Transport, end time.Time, timeout time.Duration) {
	for time.Now().Before(end) {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		} else {
			time.Sleep(time.Second) // an error at once: the caller thinks before its next
		}
		cancel()
	}
}
