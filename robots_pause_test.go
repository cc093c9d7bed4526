package polite_test

import (
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

// robots.txt was fetched again after its 24 hours in the path of the next
// request, before that request waited for its budget: with the origin
// paused by a 429's Retry-After: 300, GET /robots.txt went out 20 s into
// the pause. The fetch now waits for the pause.
func TestRobotsRefetchWaitsForPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type hit struct {
			at   time.Time
			path string
		}
		var mu sync.Mutex
		var hits []hit
		var refuse atomic.Bool
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			hits = append(hits, hit{time.Now(), r.URL.Path})
			mu.Unlock()
			if r.URL.Path == "/robots.txt" {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /private\n")), Request: r}, nil
			}
			if refuse.Swap(false) {
				h := http.Header{}
				h.Set("Retry-After", "300")
				return &http.Response{StatusCode: 429, Header: h, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, Robots: &polite.Robots{UserAgent: "mybot"}, MaxAttempts: 1}
		get := func(path string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.test"+path, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		get("/one") // fetches robots.txt at t0
		time.Sleep(24*time.Hour - 10*time.Second)
		refuse.Store(true)
		get("/two") // 429, Retry-After: 300: the origin is paused until then
		pausedAt := time.Now()
		time.Sleep(20 * time.Second) // robots.txt now older than 24 hours
		get("/three")
		mu.Lock()
		defer mu.Unlock()
		for _, h := range hits {
			if h.at.After(pausedAt) && h.at.Before(pausedAt.Add(300*time.Second)) {
				t.Errorf("GET %s was sent %v after a 429 with Retry-After: 300, inside the pause", h.path, h.at.Sub(pausedAt))
			}
		}
	})
}

// A pause longer than MaxWait fails the request with a *WaitError, as its
// own wait would, and robots.txt is not fetched inside it; the next
// request after the pause fetches it.
func TestRobotsRefetchPauseBeyondMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var robots, pages atomic.Int64
		var refuse atomic.Bool
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/robots.txt" {
				robots.Add(1)
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /private\n")), Request: r}, nil
			}
			pages.Add(1)
			if refuse.Swap(false) {
				h := http.Header{}
				h.Set("Retry-After", "3600")
				return &http.Response{StatusCode: 429, Header: h, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, Robots: &polite.Robots{UserAgent: "mybot"}, MaxAttempts: 1, MaxWait: time.Minute}
		get := func(path string) error {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.test"+path, nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		if err := get("/one"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(24*time.Hour - 10*time.Second)
		refuse.Store(true)
		if err := get("/two"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Second)
		var we *polite.WaitError
		if err := get("/three"); !errors.As(err, &we) || we.Reason != polite.ReasonRetryAfter {
			t.Errorf("a request an hour's pause holds beyond MaxWait: %v, want a *WaitError for the Retry-After", err)
		}
		if n := robots.Load(); n != 1 {
			t.Errorf("robots.txt fetched %d times, want once: not again inside the pause", n)
		}
		time.Sleep(time.Hour + time.Minute)
		if err := get("/four"); err != nil || robots.Load() != 2 || pages.Load() != 3 {
			t.Errorf("after the pause: %v, robots.txt fetched %d times, pages %d; want it fetched again and the page sent", err, robots.Load(), pages.Load())
		}
	})
}
