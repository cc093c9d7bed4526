package polite_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// run sends n GET requests to url through c from workers goroutines and
// returns the statuses seen.
func run(t *testing.T, c *http.Client, url string, n, workers int) map[int]int {
	t.Helper()
	statuses, _ := runLongest(t, c, url, n, workers)
	return statuses
}

// runLongest is run, and returns as well the longest time one task took.
func runLongest(t *testing.T, c *http.Client, url string, n, workers int) (map[int]int, time.Duration) {
	t.Helper()
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		longest  time.Duration
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				start := time.Now()
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
				resp, err := c.Do(req)
				if err != nil {
					t.Errorf("Do: %v", err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				took := time.Since(start)
				mu.Lock()
				statuses[resp.StatusCode]++
				longest = max(longest, took)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return statuses, longest
}

// politeOver returns a client whose polite Transport serves h in memory.
func politeOver(h http.Handler) (*http.Client, *polite.Transport) {
	tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
	return &http.Client{Transport: tr}, tr
}

// maxInSpan returns the most arrivals within any span of w.
func maxInSpan(arrivals []time.Time, w time.Duration) int {
	most := 0
	for i := range arrivals {
		n := 0
		for j := i; j < len(arrivals) && arrivals[j].Sub(arrivals[i]) < w; j++ {
			n++
		}
		most = max(most, n)
	}
	return most
}

func TestPacesByPolicy(t *testing.T) {
	// A server that states only its policy: no more than q starts in any w.
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.SlidingLog, Quota: 5, Window: 10 * time.Second}},
		})
		// Strip the live field: only RateLimit-Policy reaches the client.
		only := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &headerFilter{ResponseWriter: w, drop: "RateLimit"}
			h.ServeHTTP(rec, r)
		})
		c, _ := politeOver(only)
		start := time.Now()
		got := run(t, c, "http://api.test/", 12, 4)
		if got[200] != 12 {
			t.Errorf("statuses = %v, want 12 × 200", got)
		}
		if d := time.Since(start); d != 20*time.Second {
			t.Errorf("12 requests at 5 per 10s took %v, want 20s", d)
		}
		if n := maxInSpan(h.Stats().Arrivals, 10*time.Second); n > 5 {
			t.Errorf("%d arrivals within 10s, want at most 5", n)
		}
	})
}

// headerFilter drops one header field from what a handler writes.
type headerFilter struct {
	http.ResponseWriter
	drop string
}

func (f *headerFilter) WriteHeader(code int) {
	f.Header().Del(f.drop)
	f.ResponseWriter.WriteHeader(code)
}

func (f *headerFilter) Write(b []byte) (int, error) {
	f.Header().Del(f.drop)
	return f.ResponseWriter.Write(b)
}

func TestLiveQuotaCountsRequestsInFlight(t *testing.T) {
	// 100 goroutines read the same r: they must not all go.
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: time.Minute}},
			Latency:  100 * time.Millisecond,
		})
		c, _ := politeOver(h)
		start := time.Now()
		got := run(t, c, "http://api.test/", 30, 100)
		if got[200] != 30 || h.Stats().Refused != 0 {
			t.Errorf("statuses = %v, refused %d; want 30 × 200, none refused", got, h.Stats().Refused)
		}
		// 10 in the first minute, 10 in the second, 10 in the third.
		if d := time.Since(start); d < 2*time.Minute || d > 2*time.Minute+2*time.Second {
			t.Errorf("took %v, want just over 2m", d)
		}
	})
}

func TestQuotaSpentPausesOriginThenProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu   sync.Mutex
			sent []time.Time
		)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			sent = append(sent, time.Now())
			n := len(sent)
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
			if n <= 3 {
				w.Header().Set("RateLimit", fmt.Sprintf(`"default";r=%d;t=30`, 3-n))
			}
		})
		c, _ := politeOver(h)
		start := time.Now()
		run(t, c, "http://api.test/", 8, 8)
		if len(sent) != 8 {
			t.Fatalf("server saw %d requests, want 8", len(sent))
		}
		// The probe, then 2 (r=2 after it)...
		if got := sent[3].Sub(start); got < 30*time.Second {
			t.Errorf("4th request sent at %v, want after the 30s pause", got)
		}
		// ...then, after the pause, one probe alone before the others.
		if gap := sent[4].Sub(sent[3]); gap < 10*time.Millisecond {
			t.Errorf("request after the probe followed it by %v, want its answer first (10ms)", gap)
		}
	})
}

func TestSeveralPoliciesTightestWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{
				{Name: "burst", Algorithm: ratelimittest.FixedWindow, Quota: 5, Window: time.Second},
				{Name: "minute", Algorithm: ratelimittest.FixedWindow, Quota: 12, Window: time.Minute},
			},
		})
		c, _ := politeOver(h)
		start := time.Now()
		got := run(t, c, "http://api.test/", 20, 16)
		if got[200] != 20 || h.Stats().Refused != 0 {
			t.Errorf("statuses = %v, refused %d; want 20 × 200, none refused", got, h.Stats().Refused)
		}
		if d := time.Since(start); d < time.Minute {
			t.Errorf("20 requests under 12/minute took %v, want over a minute", d)
		}
	})
}

func TestRatioTrap(t *testing.T) {
	// draft-11 §8.5: a server that keeps saying r=100;t=1 under q=100;w=100
	// would lead a client pacing by r/t to 100 requests a second; the
	// policy says 1 a second on average, and no more than 100 start in any
	// 100 seconds.
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			w.Header().Set("RateLimit-Policy", `"somepolicy";q=100;w=100`)
			w.Header().Set("RateLimit", `"somepolicy";r=100;t=1`)
		})
		c, _ := politeOver(h)
		ctx, cancel := context.WithTimeout(t.Context(), 250*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
					resp, err := c.Do(req)
					if err != nil {
						<-ctx.Done() // the wait would outlast the deadline
						return
					}
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		if got := n.Load(); got > 300 {
			t.Errorf("%d requests in 250s, want at most 300 (100 per 100s)", got)
		}
	})
}

func TestMaxRateCeiling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("RateLimit", `"default";r=100000;t=1`)
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxRate: 5}
		start := time.Now()
		got := run(t, &http.Client{Transport: tr}, "http://api.test/", 21, 8)
		if got[200] != 21 {
			t.Errorf("statuses = %v", got)
		}
		if d := time.Since(start); d < 4*time.Second-time.Millisecond {
			t.Errorf("21 requests at MaxRate 5/s took %v, want at least 4s", d)
		}
	})
}

func TestConcurrencyPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "conc", Algorithm: ratelimittest.Concurrency, Quota: 4}},
			Latency:  time.Second,
		})
		c, _ := politeOver(h)
		got := run(t, c, "http://api.test/", 40, 16)
		s := h.Stats()
		if got[200] != 40 || s.Refused != 0 {
			t.Errorf("statuses = %v, refused %d; want 40 × 200", got, s.Refused)
		}
		if s.PeakInFlight > 4 {
			t.Errorf("peak in flight = %d, want at most 4", s.PeakInFlight)
		}
	})
}

func TestMaxConcurrencyCeiling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{Latency: time.Second})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxConcurrency: 3}
		run(t, &http.Client{Transport: tr}, "http://api.test/", 30, 16)
		if s := h.Stats(); s.PeakInFlight > 3 {
			t.Errorf("peak in flight = %d, want at most 3", s.PeakInFlight)
		}
	})
}

func TestContentBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "bw", Algorithm: ratelimittest.FixedWindow, Quota: 1000, Window: 10 * time.Second, Unit: "content-bytes"}},
			BodySize: 100,
		})
		c, _ := politeOver(h)
		start := time.Now()
		got := run(t, c, "http://api.test/", 35, 8)
		if got[200] != 35 || h.Stats().Refused != 0 {
			t.Errorf("statuses = %v, refused %d; want 35 × 200", got, h.Stats().Refused)
		}
		// 10 responses of 100 bytes per 10s window.
		if d := time.Since(start); d < 30*time.Second {
			t.Errorf("took %v, want at least 30s", d)
		}
	})
}

func TestUnknownUnitsDoNotPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("RateLimit-Policy", `"tpm";q=1000;qu="tokens";w=60`)
			w.Header().Set("RateLimit", `"tpm";r=0;t=60`)
		})
		c, _ := politeOver(h)
		start := time.Now()
		run(t, c, "http://api.test/", 10, 2)
		if d := time.Since(start); d != 0 {
			t.Errorf("token quota paced requests for %v, want 0", d)
		}
	})
}

func TestCachedResponseNeverPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Age", "120")
			w.Header().Set("RateLimit", `"default";r=0;t=60`)
		})
		c, _ := politeOver(h)
		start := time.Now()
		run(t, c, "http://api.test/", 10, 4)
		if d := time.Since(start); d != 0 {
			t.Errorf("responses with Age: 120 paused requests for %v, want 0", d)
		}
	})
}

func TestRetryAfterIsAFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent []time.Time
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sent = append(sent, time.Now())
			if len(sent) == 1 {
				w.Header().Set("Retry-After", "7")
				w.Header().Set("RateLimit", `"default";r=0;t=3`) // Retry-After wins
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		c, _ := politeOver(h)
		resp, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || len(sent) != 2 {
			t.Fatalf("status %d after %d sends, want 200 after 2", resp.StatusCode, len(sent))
		}
		if gap := sent[1].Sub(sent[0]); gap < 7*time.Second || gap > 7*time.Second+time.Second {
			t.Errorf("retry after %v, want 7s plus a little jitter", gap)
		}
	})
}

func TestAbsurdRetryAfterReturnsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sends atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sends.Add(1)
			w.Header().Set("Retry-After", "1000000")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, "slow down")
		})
		c, _ := politeOver(h)
		start := time.Now()
		resp, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d >= time.Millisecond {
			t.Errorf("429 returned after %v, want under 1ms", d)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 429 || string(body) != "slow down" || sends.Load() != 1 {
			t.Errorf("got %d %q after %d sends, want the 429 unaltered after 1", resp.StatusCode, body, sends.Load())
		}
		// The origin asked for a wait beyond MaxWait: the next request
		// fails at once, unsent, with the wait it would need.
		_, err = c.Get("http://api.test/")
		var we *polite.WaitError
		if !errors.As(err, &we) || !errors.Is(err, polite.ErrWaitTooLong) {
			t.Fatalf("second request: err = %v, want a *WaitError", err)
		}
		// The stored pause is capped at 24 hours, still far beyond MaxWait.
		if we.Delay != 24*time.Hour || we.Reason != polite.ReasonRetryAfter {
			t.Errorf("WaitError = %+v, want 24h (the pause cap) for retry-after", we)
		}
		if sends.Load() != 1 {
			t.Errorf("server saw %d requests, want 1", sends.Load())
		}
	})
}

func TestBackoffWithoutHints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent []time.Time
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sent = append(sent, time.Now())
			if len(sent) <= 3 {
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		c, _ := politeOver(h)
		resp, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || len(sent) != 4 {
			t.Fatalf("status %d after %d sends, want 200 after 4", resp.StatusCode, len(sent))
		}
		// 1s, 2s, 4s, each randomised by ±50%.
		for i, base := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			gap := sent[i+1].Sub(sent[i])
			if gap < base/2 || gap > base*3/2+time.Millisecond {
				t.Errorf("wait %d = %v, want %v ± 50%%", i+1, gap, base)
			}
		}
	})
}

func TestGivesUpAfterMaxAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sends atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sends.Add(1)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 3}
		resp, err := (&http.Client{Transport: tr}).Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 429 || sends.Load() != 3 {
			t.Errorf("got %d after %d sends, want 429 after 3", resp.StatusCode, sends.Load())
		}
	})
}

func TestSafeRetries(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		method    string
		body      bool // a body...
		getBody   bool // ...that can be replayed
		key       bool // Idempotency-Key
		nilKey    bool // an X-Idempotency-Key entry with no value, which net/http does not send
		wantSends int
	}{
		{"429 GET", 429, "GET", false, false, false, false, 2},
		{"429 POST replayable", 429, "POST", true, true, false, false, 2},
		{"429 POST not replayable", 429, "POST", true, false, false, false, 1},
		{"503 GET", 503, "GET", false, false, false, false, 2},
		{"503 PUT replayable", 503, "PUT", true, true, false, false, 2},
		{"503 POST", 503, "POST", true, true, false, false, 1},
		{"503 POST with Idempotency-Key", 503, "POST", true, true, true, false, 2},
		// net/http's Transport takes a request so marked for one it may
		// send twice; polite read the field's value and took it for none.
		{"503 POST with a nil X-Idempotency-Key", 503, "POST", true, true, false, true, 2},
		{"503 DELETE", 503, "DELETE", false, false, false, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var bodies []string
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					b, _ := io.ReadAll(r.Body)
					bodies = append(bodies, string(b))
					if len(bodies) == 1 {
						w.Header().Set("Retry-After", "1")
						w.WriteHeader(tt.status)
					}
				})
				c, _ := politeOver(h)
				var body io.Reader
				if tt.body {
					body = strings.NewReader("payload")
					if !tt.getBody {
						body = io.NopCloser(body) // NewRequest cannot set GetBody
					}
				}
				req, _ := http.NewRequestWithContext(t.Context(), tt.method, "http://api.test/", body)
				if tt.key {
					req.Header.Set("Idempotency-Key", "k1")
				}
				if tt.nilKey {
					req.Header["X-Idempotency-Key"] = nil
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if len(bodies) != tt.wantSends {
					t.Fatalf("sent %d times, want %d", len(bodies), tt.wantSends)
				}
				for i, b := range bodies {
					if tt.body && b != "payload" {
						t.Errorf("send %d had body %q, want %q", i+1, b, "payload")
					}
				}
			})
		})
	}
}

func TestPacingWaitBeyondMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sends atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sends.Add(1)
			w.Header().Set("RateLimit", `"daily";r=0;t=86400`)
		})
		c, _ := politeOver(h)
		resp, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		body := &closeRecorder{Reader: strings.NewReader("x")}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/", body)
		start := time.Now()
		_, err = c.Do(req)
		var we *polite.WaitError
		if !errors.As(err, &we) {
			t.Fatalf("err = %v, want a *WaitError", err)
		}
		if we.Reason != polite.ReasonQuota || we.Delay < 86400*time.Second || we.Key != "http://api.test" || we.Deadline {
			t.Errorf("WaitError = %+v, want a quota wait of a day for http://api.test", we)
		}
		if time.Since(start) != 0 || sends.Load() != 1 || !body.closed {
			t.Errorf("waited %v, %d sends, body closed %v; want no wait, 1 send, body closed", time.Since(start), sends.Load(), body.closed)
		}
	})
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestContextDeadlineShorterThanWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("RateLimit", `"default";r=0;t=30`)
		})
		c, _ := politeOver(h)
		resp, _ := c.Get("http://api.test/")
		resp.Body.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		start := time.Now()
		_, err := c.Do(req)
		var we *polite.WaitError
		if !errors.As(err, &we) || !we.Deadline || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want a *WaitError matching context.DeadlineExceeded", err)
		}
		if time.Since(start) != 0 {
			t.Errorf("failed after %v, want at once", time.Since(start))
		}
	})
}

func TestContextCanceledDuringWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("RateLimit", `"default";r=0;t=30`)
		})
		c, _ := politeOver(h)
		resp, _ := c.Get("http://api.test/")
		resp.Body.Close()
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(5*time.Second, cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		start := time.Now()
		_, err := c.Do(req)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("returned after %v, want 5s", d)
		}
	})
}

func TestRequestNotMutated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n++; n == 1 {
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		c, _ := politeOver(h)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/x", strings.NewReader("body"))
		req.Header.Set("X-A", "1")
		body, hdr, url := req.Body, req.Header.Clone(), *req.URL
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if req.Body != body || len(req.Header) != len(hdr) || req.Header.Get("X-A") != "1" || *req.URL != url {
			t.Errorf("request changed: body %v header %v url %v", req.Body != body, req.Header, req.URL)
		}
	})
}

func TestZeroTransportAndWrap(t *testing.T) {
	c := polite.Wrap(nil)
	if _, ok := c.Transport.(*polite.Transport); !ok || c == http.DefaultClient {
		t.Fatalf("Wrap(nil) = %#v, want a new client over a *polite.Transport", c)
	}
	// NewClient(nil) is a client over a Transport of its own, not a nil
	// *Transport, which panicked on the first call.
	if tr, ok := polite.NewClient(nil).Transport.(*polite.Transport); !ok || tr == nil {
		t.Fatalf("NewClient(nil).Transport = %#v, want a *polite.Transport", tr)
	}
	polite.NewClient(nil).CloseIdleConnections()
	if http.DefaultClient.Transport != nil {
		t.Error("Wrap(nil) changed http.DefaultClient")
	}
	base := &http.Client{Timeout: time.Second, Transport: &ratelimittest.Transport{}}
	w := polite.Wrap(base)
	if tr := w.Transport.(*polite.Transport); tr.Base != base.Transport || w.Timeout != time.Second {
		t.Errorf("Wrap kept Base %v timeout %v, want the original transport and timeout", tr.Base, w.Timeout)
	}
	if _, ok := base.Transport.(*ratelimittest.Transport); !ok {
		t.Error("Wrap changed the client it wrapped")
	}
	if ww := polite.Wrap(w); ww == w || ww.Transport != w.Transport {
		t.Errorf("Wrap of a polite client = %v over %v, want a copy over the same Transport, not one polite Transport over another", ww, ww.Transport)
	}
}

// Budget.MaxRate holds whatever the key's idleness: at one request an
// hour, a key idle for IdleTTL (10 minutes by default) was forgotten with
// its next start still 50 minutes ahead, and the next request went at
// once. (Transport.MaxRate kept its entry until its next start.)
func TestBudgetMaxRateOutlivesIdleTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
		tr := &polite.Transport{
			Base:    &ratelimittest.Transport{Handler: h},
			Budget:  &polite.Budget{MaxRate: 1.0 / 3600}, // one request an hour
			MaxWait: 2 * time.Hour,
		}
		c := &http.Client{Transport: tr}
		get(t, c, "http://api.test/")
		first := time.Now()
		time.Sleep(11 * time.Minute)
		get(t, c, "http://api.test/")
		if gap := time.Since(first); gap < time.Hour {
			t.Errorf("two requests started %v apart under Budget.MaxRate of one an hour", gap)
		}
	})
}
