package polite_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// pausedRobots returns a Transport whose origin http://a.test has
// had its robots.txt for 24 h + 10 s, and whose budget key is paused by a
// 429 with Retry-After: 300 given 20 s ago: the next request must fetch
// robots.txt again, which the pause forbids.
func pausedRobots(t *testing.T, tr *polite.Transport) (pausedAt time.Time, robots *atomic.Int64) {
	t.Helper()
	robots = new(atomic.Int64)
	var refuse atomic.Bool
	tr.Base = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/robots.txt" {
			robots.Add(1)
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /private\n")), Request: r}, nil
		}
		if refuse.Swap(false) {
			h := http.Header{}
			h.Set("Retry-After", "300")
			return &http.Response{StatusCode: 429, Header: h, Body: http.NoBody, Request: r}, nil
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	if tr.Robots == nil {
		tr.Robots = &polite.Robots{UserAgent: "mybot"}
	}
	tr.MaxAttempts = 1
	get := func(path string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.test"+path, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get("/one")
	time.Sleep(24*time.Hour - 10*time.Second)
	refuse.Store(true)
	get("/two")
	pausedAt = time.Now()
	time.Sleep(20 * time.Second)
	return pausedAt, robots
}

// While the origin is paused, its expired robots.txt decides (no fetch is
// sent, none held): a request with a 10 s deadline, behind another, fails
// at once with its own wait's *WaitError (Deadline). (A first form held
// the fetch for the pause, and such a request waited on the robots entry
// until its deadline.)
func TestRobotsStaleWhilePausedWaiterFailsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{}
		pausedRobots(t, tr)
		var wg sync.WaitGroup
		wg.Go(func() { // the fetcher: no deadline, waits out the pause
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.test/three", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		})
		synctest.Wait() // the fetcher holds the robots entry, asleep in the pause
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/four", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		var we *polite.WaitError
		if took := time.Since(start); !errors.As(err, &we) || took > 0 {
			t.Errorf("a request whose deadline (10 s) ends inside the pause (280 s left): %v after %v; want a *WaitError at once", err, took)
		}
		wg.Wait()
	})
}

// Budget.Forget ends the pause, and the request waiting on it goes at
// once. (A first form held the robots.txt fetch on a timer to the
// pause's old end.)
func TestRobotsStaleWhilePausedForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &polite.Budget{}
		tr := &polite.Transport{Budget: b}
		pausedRobots(t, tr)
		done := make(chan time.Time, 1)
		go func() {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.test/three", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
			done <- time.Now()
		}()
		time.Sleep(10 * time.Second)
		forgot := time.Now()
		b.Forget("http://a.test")
		select {
		case at := <-done:
			if d := at.Sub(forgot); d > time.Second {
				t.Errorf("sent %v after Budget.Forget ended the pause, want at once", d)
			}
		case <-time.After(time.Minute):
			t.Errorf("still held a minute after Budget.Forget ended the pause")
			<-done
		}
	})
}

// A pause beyond MaxWait fails the request with its own wait's *WaitError
// (Attempt 1, Waited set) and an EventWaitError. (A first form built
// another, with Attempt 0 and no event.)
func TestRobotsStaleWhilePausedWaitError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var kinds []polite.EventKind
		tr := &polite.Transport{MaxWait: time.Minute, OnEvent: func(e polite.Event) {
			mu.Lock()
			kinds = append(kinds, e.Kind)
			mu.Unlock()
		}}
		pausedRobots(t, tr)
		mu.Lock()
		kinds = nil
		mu.Unlock()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.test/three", nil)
		_, err := tr.RoundTrip(req)
		var we *polite.WaitError
		if !errors.As(err, &we) {
			t.Fatalf("%v, want a *WaitError", err)
		}
		if we.Attempt != 1 {
			t.Errorf("WaitError.Attempt %d, want 1 (the attempt not sent)", we.Attempt)
		}
		mu.Lock()
		defer mu.Unlock()
		found := false
		for _, k := range kinds {
			found = found || k == polite.EventWaitError
		}
		if !found {
			t.Errorf("events %v, want an EventWaitError as the request's own wait emits", kinds)
		}
	})
}
