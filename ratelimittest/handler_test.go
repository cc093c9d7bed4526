package ratelimittest_test

import (
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/parse"
	"github.com/politehttp/polite/ratelimittest"
)

// client returns a client that reaches h in memory.
func client(h http.Handler) *http.Client {
	return &http.Client{Transport: &ratelimittest.Transport{Handler: h}}
}

// send sends a GET to c, as user in X-User if not empty, and returns the
// response and its body, read and closed.
func send(t *testing.T, c *http.Client, user string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.example/items", nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.Header.Set("X-User", user)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return resp, string(body)
}

// sleepUntil sleeps until the offset at since start.
func sleepUntil(start time.Time, at time.Duration) {
	if d := time.Until(start.Add(at)); d > 0 {
		time.Sleep(d)
	}
}

// byUser partitions requests by their X-User header.
func byUser(r *http.Request) string { return r.Header.Get("X-User") }

// exchange is one request at an offset since the Handler was created and
// the response expected.
type exchange struct {
	at         time.Duration
	user       string
	status     int
	rateLimit  string // RateLimit field
	retryAfter string
}

func TestAlgorithms(t *testing.T) {
	const ok, refused = http.StatusOK, http.StatusTooManyRequests
	tests := []struct {
		name      string
		cfg       ratelimittest.Config
		policy    string // RateLimit-Policy field of every response
		exchanges []exchange
	}{
		{
			name: "fixed window",
			cfg: ratelimittest.Config{Policies: []ratelimittest.Policy{
				{Algorithm: ratelimittest.FixedWindow, Quota: 3, Window: 10 * time.Second},
			}},
			policy: `"default";q=3;w=10`,
			exchanges: []exchange{
				{at: 0, status: ok, rateLimit: `"default";r=2;t=10`},
				{at: 0, status: ok, rateLimit: `"default";r=1;t=10`},
				{at: 0, status: ok, rateLimit: `"default";r=0;t=10`},
				{at: 0, status: refused, rateLimit: `"default";r=0;t=10`, retryAfter: "10"},
				{at: 9999 * time.Millisecond, status: refused, rateLimit: `"default";r=0;t=1`, retryAfter: "1"},
				{at: 10 * time.Second, status: ok, rateLimit: `"default";r=2;t=10`},
				{at: 14500 * time.Millisecond, status: ok, rateLimit: `"default";r=1;t=6`},
			},
		},
		{
			name: "sliding log",
			cfg: ratelimittest.Config{Policies: []ratelimittest.Policy{
				{Name: "log", Algorithm: ratelimittest.SlidingLog, Quota: 2, Window: 10 * time.Second},
			}},
			policy: `"log";q=2;w=10`,
			exchanges: []exchange{
				{at: 0, status: ok, rateLimit: `"log";r=1;t=10`},
				{at: 3 * time.Second, status: ok, rateLimit: `"log";r=0;t=7`},
				{at: 5 * time.Second, status: refused, rateLimit: `"log";r=0;t=5`, retryAfter: "5"},
				{at: 10 * time.Second, status: ok, rateLimit: `"log";r=0;t=3`},
				{at: 12 * time.Second, status: refused, rateLimit: `"log";r=0;t=1`, retryAfter: "1"},
				{at: 13 * time.Second, status: ok, rateLimit: `"log";r=0;t=7`},
			},
		},
		{
			name: "sliding window counter",
			cfg: ratelimittest.Config{Policies: []ratelimittest.Policy{
				{Algorithm: ratelimittest.SlidingWindow, Quota: 2, Window: 10 * time.Second},
			}},
			policy: `"default";q=2;w=10`,
			exchanges: []exchange{
				// Spending both now leaves prev=2 at 10s, whose weight falls to 1 at 15s.
				{at: 0, status: ok, rateLimit: `"default";r=1;t=15`},
				{at: 0, status: ok, rateLimit: `"default";r=0;t=15`},
				{at: 0, status: refused, rateLimit: `"default";r=0;t=15`, retryAfter: "15"},
				// ceil(2*5.1/10) = 2 still counted.
				{at: 14900 * time.Millisecond, status: refused, rateLimit: `"default";r=0;t=1`, retryAfter: "1"},
				// ceil(2*5/10) = 1, plus this one: full until the next window, where prev=1 weighs 1.
				{at: 15 * time.Second, status: ok, rateLimit: `"default";r=0;t=5`},
				{at: 20 * time.Second, status: ok, rateLimit: `"default";r=0;t=10`},
			},
		},
		{
			name: "token bucket",
			cfg: ratelimittest.Config{Policies: []ratelimittest.Policy{
				{Name: "bucket", Algorithm: ratelimittest.TokenBucket, Quota: 2, Window: 10 * time.Second},
			}},
			policy: `"bucket";q=2;w=10`,
			exchanges: []exchange{
				{at: 0, status: ok, rateLimit: `"bucket";r=1;t=5`},
				{at: 0, status: ok, rateLimit: `"bucket";r=0;t=5`},
				{at: 0, status: refused, rateLimit: `"bucket";r=0;t=5`, retryAfter: "5"},
				{at: 4 * time.Second, status: refused, rateLimit: `"bucket";r=0;t=1`, retryAfter: "1"},
				{at: 5 * time.Second, status: ok, rateLimit: `"bucket";r=0;t=5`},
				{at: 17500 * time.Millisecond, status: ok, rateLimit: `"bucket";r=1;t=5`},
			},
		},
		{
			name: "leaky bucket",
			cfg: ratelimittest.Config{Policies: []ratelimittest.Policy{
				{Name: "nginx", Algorithm: ratelimittest.LeakyBucket, Quota: 10, Window: time.Second, Burst: 1},
			}},
			policy: `"nginx";q=10;w=1`,
			exchanges: []exchange{
				// Burst+1 at once, then one every 100ms.
				{at: 0, status: ok, rateLimit: `"nginx";r=1;t=1`},
				{at: 0, status: ok, rateLimit: `"nginx";r=0;t=1`},
				{at: 0, status: refused, rateLimit: `"nginx";r=0;t=1`, retryAfter: "1"},
				{at: 99 * time.Millisecond, status: refused, rateLimit: `"nginx";r=0;t=1`, retryAfter: "1"},
				{at: 100 * time.Millisecond, status: ok, rateLimit: `"nginx";r=0;t=1`},
				{at: 300 * time.Millisecond, status: ok, rateLimit: `"nginx";r=1;t=1`},
			},
		},
		{
			name: "two policies",
			cfg: ratelimittest.Config{Policies: []ratelimittest.Policy{
				{Name: "burst", Quota: 2, Window: time.Second},
				{Name: "daily", Algorithm: ratelimittest.SlidingLog, Quota: 3, Window: 24 * time.Hour},
			}},
			policy: `"burst";q=2;w=1, "daily";q=3;w=86400`,
			exchanges: []exchange{
				{at: 0, status: ok, rateLimit: `"burst";r=1;t=1, "daily";r=2;t=86400`},
				{at: 0, status: ok, rateLimit: `"burst";r=0;t=1, "daily";r=1;t=86400`},
				{at: 0, status: refused, rateLimit: `"burst";r=0;t=1, "daily";r=1;t=86400`, retryAfter: "1"},
				{at: time.Second, status: ok, rateLimit: `"burst";r=1;t=1, "daily";r=0;t=86399`},
				{at: time.Second, status: refused, rateLimit: `"burst";r=1;t=1, "daily";r=0;t=86399`, retryAfter: "86399"},
			},
		},
		{
			name: "content bytes",
			cfg: ratelimittest.Config{BodySize: 4, Policies: []ratelimittest.Policy{
				{Name: "bytes", Quota: 10, Window: 10 * time.Second, Unit: "content-bytes"},
			}},
			policy: `"bytes";q=10;qu="content-bytes";w=10`,
			exchanges: []exchange{
				{at: 0, status: ok, rateLimit: `"bytes";r=6;t=10`},
				{at: 0, status: ok, rateLimit: `"bytes";r=2;t=10`},
				{at: 0, status: refused, rateLimit: `"bytes";r=2;t=10`, retryAfter: "10"},
			},
		},
		{
			name: "sub-second window",
			cfg: ratelimittest.Config{Policies: []ratelimittest.Policy{
				{Quota: 1, Window: 500 * time.Millisecond, Unit: "tokens"},
			}},
			policy: `"default";q=1;qu="tokens";w=1`,
			exchanges: []exchange{
				{at: 0, status: ok, rateLimit: `"default";r=0;t=1`},
				{at: 0, status: refused, rateLimit: `"default";r=0;t=1`, retryAfter: "1"},
				{at: 500 * time.Millisecond, status: ok, rateLimit: `"default";r=0;t=1`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewHandler(tt.cfg)
				c := client(h)
				start := time.Now()
				for i, ex := range tt.exchanges {
					sleepUntil(start, ex.at)
					resp, _ := send(t, c, ex.user)
					if resp.StatusCode != ex.status {
						t.Errorf("request %d at %v: status %d, want %d", i, ex.at, resp.StatusCode, ex.status)
					}
					if got := resp.Header.Get("RateLimit-Policy"); got != tt.policy {
						t.Errorf("request %d at %v: RateLimit-Policy %q, want %q", i, ex.at, got, tt.policy)
					}
					if got := resp.Header.Get("RateLimit"); got != ex.rateLimit {
						t.Errorf("request %d at %v: RateLimit %q, want %q", i, ex.at, got, ex.rateLimit)
					}
					if got := resp.Header.Get("Retry-After"); got != ex.retryAfter {
						t.Errorf("request %d at %v: Retry-After %q, want %q", i, ex.at, got, ex.retryAfter)
					}
				}
			})
		})
	}
}

func TestPartition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{
			{Name: "peruser", Quota: 1, Window: time.Minute, Partition: byUser},
		}})
		c := client(h)
		tests := []struct {
			user, policy, rateLimit string
			status                  int
		}{
			{"alice", `"peruser";q=1;w=60;pk=:YWxpY2U=:`, `"peruser";r=0;t=60;pk=:YWxpY2U=:`, http.StatusOK},
			{"alice", `"peruser";q=1;w=60;pk=:YWxpY2U=:`, `"peruser";r=0;t=60;pk=:YWxpY2U=:`, http.StatusTooManyRequests},
			{"bob", `"peruser";q=1;w=60;pk=:Ym9i:`, `"peruser";r=0;t=60;pk=:Ym9i:`, http.StatusOK},
		}
		for i, tt := range tests {
			resp, _ := send(t, c, tt.user)
			if resp.StatusCode != tt.status {
				t.Errorf("request %d as %s: status %d, want %d", i, tt.user, resp.StatusCode, tt.status)
			}
			if got := resp.Header.Get("RateLimit-Policy"); got != tt.policy {
				t.Errorf("request %d as %s: RateLimit-Policy %q, want %q", i, tt.user, got, tt.policy)
			}
			if got := resp.Header.Get("RateLimit"); got != tt.rateLimit {
				t.Errorf("request %d as %s: RateLimit %q, want %q", i, tt.user, got, tt.rateLimit)
			}
		}
	})
}

func TestConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Latency:  time.Second,
			Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.Concurrency, Quota: 2}},
		})
		c := client(h)
		start := time.Now()
		done := make(chan time.Duration, 2)
		for range 2 {
			go func() {
				resp, _ := send(t, c, "")
				if resp.StatusCode != http.StatusOK {
					t.Errorf("request in flight: status %d, want 200", resp.StatusCode)
				}
				done <- time.Since(start)
			}()
		}
		synctest.Wait() // both are being served

		resp, _ := send(t, c, "")
		if got := time.Since(start); got != 0 {
			t.Errorf("refusal took %v, want 0", got)
		}
		want := http.Header{
			"Ratelimit-Policy": {`"default";q=2;qu="concurrent-requests"`},
			"Ratelimit":        {`"default";r=0`},
			"Retry-After":      {"1"},
		}
		if resp.StatusCode != http.StatusTooManyRequests || !equalFields(resp.Header, want) {
			t.Errorf("third request: %d %v, want 429 %v", resp.StatusCode, fields(resp.Header), want)
		}
		for range 2 {
			if got := <-done; got != time.Second {
				t.Errorf("admitted request took %v, want 1s", got)
			}
		}

		// Alone, a request counts itself in flight.
		resp, _ = send(t, c, "")
		if got, want := resp.Header.Get("RateLimit"), `"default";r=1`; got != want {
			t.Errorf("lone request: RateLimit %q, want %q", got, want)
		}
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("lone request ended at %v, want 2s", got)
		}
	})
}

func TestStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Latency:  time.Second,
			BodySize: 5,
			Policies: []ratelimittest.Policy{{Quota: 3, Window: time.Minute}},
		})
		c := client(h)
		start := time.Now()
		offsets := []time.Duration{0, 0, 500 * time.Millisecond, 2 * time.Second, 2 * time.Second}
		done := make(chan struct{})
		for _, at := range offsets {
			go func() {
				defer func() { done <- struct{}{} }()
				sleepUntil(start, at)
				send(t, c, "")
			}()
			synctest.Wait() // keep arrivals in order
		}
		for range offsets {
			<-done
		}

		got := h.Stats()
		if got.Requests != 5 || got.Admitted != 3 || got.Refused != 2 {
			t.Errorf("Requests, Admitted, Refused = %d, %d, %d, want 5, 3, 2", got.Requests, got.Admitted, got.Refused)
		}
		if want := map[int]int{200: 3, 429: 2}; !maps.Equal(got.Status, want) {
			t.Errorf("Status = %v, want %v", got.Status, want)
		}
		if got.PeakInFlight != 3 {
			t.Errorf("PeakInFlight = %d, want 3", got.PeakInFlight)
		}
		if got.Bytes != 15 {
			t.Errorf("Bytes = %d, want 15", got.Bytes)
		}
		if len(got.Arrivals) != len(offsets) {
			t.Fatalf("len(Arrivals) = %d, want %d", len(got.Arrivals), len(offsets))
		}
		for i, a := range got.Arrivals {
			if d := a.Sub(start); d != offsets[i] {
				t.Errorf("Arrivals[%d] at %v, want %v", i, d, offsets[i])
			}
		}

		// Stats is a copy.
		got.Status[200] = 100
		got.Arrivals[0] = time.Time{}
		if again := h.Stats(); again.Status[200] != 3 || !again.Arrivals[0].Equal(start) {
			t.Errorf("changing a Stats result changed the Handler's: %v", again)
		}

		h.Reset()
		if got := h.Stats(); got.Requests != 0 || len(got.Status) != 0 || len(got.Arrivals) != 0 {
			t.Errorf("Stats after Reset = %+v, want zero", got)
		}
		if resp, _ := send(t, c, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("status after Reset %d, want 200", resp.StatusCode)
		}
	})
}

// A custom Next that aborts (panic(http.ErrAbortHandler)) before it
// writes sends no response, and the client's RoundTrip fails: Stats
// counted a 200 for it, since a request counted as served once Next was
// called, not once it returned.
func TestStatsSkipAbortedResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Minute}},
			Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				panic(http.ErrAbortHandler)
			}),
		})
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.example/", nil)
		resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("RoundTrip got %d, want an error", resp.StatusCode)
		}
		synctest.Wait()
		if s := h.Stats(); len(s.Status) != 0 || s.Admitted != 1 {
			t.Errorf("Stats = %+v after an aborted response (%v), want 1 admitted and no status counted", s, err)
		}
	})
}

// TestPeakInFlight has requests overlap two at a time at most.
func TestPeakInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{Latency: time.Second})
		c := client(h)
		start := time.Now()
		done := make(chan struct{})
		for _, at := range []time.Duration{0, 500 * time.Millisecond, 1200 * time.Millisecond, 1700 * time.Millisecond} {
			go func() {
				defer func() { done <- struct{}{} }()
				sleepUntil(start, at)
				send(t, c, "")
			}()
		}
		for range 4 {
			<-done
		}
		if got := h.Stats().PeakInFlight; got != 2 {
			t.Errorf("PeakInFlight = %d, want 2", got)
		}
	})
}

func TestNewHandlerPanics(t *testing.T) {
	tests := []struct {
		name string
		cfg  ratelimittest.Config
	}{
		{"unknown dialect", ratelimittest.Config{Dialect: "klingon"}},
		{"unknown algorithm", ratelimittest.Config{Policies: []ratelimittest.Policy{{Algorithm: "leaky", Quota: 1, Window: time.Second}}}},
		{"no window", ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 1}}}},
		{"negative quota", ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: -1, Window: time.Second}}}},
		{"negative burst", ratelimittest.Config{Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.LeakyBucket, Quota: 1, Window: time.Second, Burst: -1}}}},
		{"burst above MaxBurst", ratelimittest.Config{Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.LeakyBucket, Quota: 1, Window: time.Second, Burst: ratelimittest.MaxBurst + 1}}}},
		{"leaky bucket without window", ratelimittest.Config{Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.LeakyBucket, Quota: 1}}}},
		// Advertised in its own unit, a Concurrency policy stated a
		// quota of bytes, or of requests, while it counted requests in
		// flight.
		{"concurrency in bytes", ratelimittest.Config{Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.Concurrency, Quota: 3, Unit: "content-bytes"}}}},
		{"concurrency in requests", ratelimittest.Config{Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.Concurrency, Quota: 3, Unit: "requests"}}}},
		{"window in concurrent requests", ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 3, Window: time.Second, Unit: "concurrent-requests"}}}},
		{"refuse status no code", ratelimittest.Config{RefuseStatus: 42}},
		{"refuse status past 999", ratelimittest.Config{RefuseStatus: 1000}},
		{"refuse status negative", ratelimittest.Config{RefuseStatus: -429}},
		{"refuse status accepting", ratelimittest.Config{RefuseStatus: http.StatusOK}},
		{"refuse status informational", ratelimittest.Config{RefuseStatus: http.StatusEarlyHints}},
		{"refuse status redirect", ratelimittest.Config{RefuseStatus: http.StatusFound}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("NewHandler(%+v) did not panic", tt.cfg)
				}
			}()
			ratelimittest.NewHandler(tt.cfg)
		})
	}
}

// fields returns the header without the fields every response has.
func fields(h http.Header) http.Header {
	f := h.Clone()
	for _, k := range []string{"Date", "Content-Type", "Content-Length"} {
		f.Del(k)
	}
	return f
}

// equalFields reports whether h, without the fields every response has,
// is want.
func equalFields(h, want http.Header) bool {
	return reflect.DeepEqual(fields(h), want)
}

// The single-policy dialects describe the policy that admits the fewest
// requests, whatever its unit: after one request of 2 bytes, a quota of 4
// requests has 3 left, one of 6 content bytes 4 bytes (2 requests). The
// requests policy was described before (3 < 4, bytes against requests),
// and the third request after it was refused.
func TestDescribeFewestRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := client(ratelimittest.NewHandler(ratelimittest.Config{
			Dialect:  ratelimittest.XRateLimitDelta,
			BodySize: 2,
			Policies: []ratelimittest.Policy{
				{Name: "requests", Quota: 4, Window: time.Minute},
				{Name: "bytes", Quota: 6, Window: time.Minute, Unit: "content-bytes"},
			},
		}))
		resp, _ := send(t, c, "")
		if l, r := resp.Header.Get("X-RateLimit-Limit"), resp.Header.Get("X-RateLimit-Remaining"); l != "6" || r != "4" {
			t.Errorf("X-RateLimit-Limit %s, Remaining %s; want the bytes policy's, 6 and 4", l, r)
		}
		var codes []int
		for range 3 {
			resp, _ := send(t, c, "")
			codes = append(codes, resp.StatusCode)
		}
		if want := []int{200, 200, 429}; !reflect.DeepEqual(codes, want) {
			t.Errorf("the next three requests: %v, want %v", codes, want)
		}
	})
}

// A request that costs nothing (a content-bytes policy, BodySize negative)
// leaves a leaky bucket as it was: every one is admitted. Each was charged
// a whole request before, and the third was refused.
func TestLeakyBucketZeroCost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := client(ratelimittest.NewHandler(ratelimittest.Config{BodySize: -1, Policies: []ratelimittest.Policy{
			{Algorithm: ratelimittest.LeakyBucket, Quota: 1, Window: time.Minute, Unit: "content-bytes"},
		}}))
		for i := range 5 {
			if resp, _ := send(t, c, ""); resp.StatusCode != http.StatusOK {
				t.Fatalf("request %d of no bytes: %d, Retry-After %q; want 200", i+1, resp.StatusCode, resp.Header.Get("Retry-After"))
			}
		}
	})
}

// A leaky bucket of the largest Burst advertises what it admits: Burst+1
// at once, one of them spent, and one more a second after the rest are,
// within the 15 digits of a Structured Fields Integer.
// Burst*1000 saturated before, and the reset was t=0, "now".
func TestLeakyBucketMaxBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := client(ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{
			{Algorithm: ratelimittest.LeakyBucket, Quota: 1, Window: time.Second, Burst: ratelimittest.MaxBurst},
		}}))
		resp, _ := send(t, c, "")
		want := fmt.Sprintf(`"default";r=%d;t=1`, min(int64(ratelimittest.MaxBurst), 999_999_999_999_999))
		if got := resp.Header.Get("RateLimit"); resp.StatusCode != http.StatusOK || got != want {
			t.Errorf("%s, RateLimit %q; want 200 OK, %q", resp.Status, got, want)
		}
	})
}

// A Phase of any length is its remainder within a window: the Handler
// answers the same requests as with that remainder, and Ideal says the
// same. A Phase of math.MaxInt64 saturated the time since the windows'
// origin, so that time stood still: FixedWindow and LeakyBucket admitted
// every request, SlidingWindow advertised t=0.
func TestHugePhase(t *testing.T) {
	const huge = time.Duration(math.MaxInt64)
	for _, alg := range []ratelimittest.Algorithm{
		ratelimittest.FixedWindow, ratelimittest.SlidingWindow, ratelimittest.SlidingWindowRounded, ratelimittest.LeakyBucket,
	} {
		t.Run(string(alg), func(t *testing.T) {
			cfg := func(phase time.Duration) ratelimittest.Config {
				return ratelimittest.Config{Phase: phase, Policies: []ratelimittest.Policy{{Algorithm: alg, Quota: 2, Window: time.Second}}}
			}
			if got, want := ratelimittest.Ideal(cfg(huge), 10, 1), ratelimittest.Ideal(cfg(huge%time.Second), 10, 1); got != want {
				t.Errorf("Ideal with Phase %v = %v, with %v = %v", huge, got, huge%time.Second, want)
			}
			synctest.Test(t, func(t *testing.T) {
				c, ref := client(ratelimittest.NewHandler(cfg(huge))), client(ratelimittest.NewHandler(cfg(huge%time.Second)))
				start := time.Now()
				admitted := 0
				for i := range 40 {
					sleepUntil(start, time.Duration(i/4)*300*time.Millisecond)
					resp, _ := send(t, c, "")
					want, _ := send(t, ref, "")
					if resp.StatusCode != want.StatusCode || !equalFields(resp.Header, fields(want.Header)) {
						t.Fatalf("request %d: %s %v; with Phase %v, %s %v", i+1, resp.Status, fields(resp.Header), huge%time.Second, want.Status, fields(want.Header))
					}
					if resp.StatusCode == http.StatusOK {
						admitted++
					}
				}
				if admitted > 2*4 {
					t.Errorf("Quota 2 a second admitted %d of 40 requests over 3 s", admitted)
				}
			})
		})
	}
}

// A policy of Quota 0 refuses every request that costs anything, but not
// one that costs nothing (a content-bytes policy, no body), whatever its
// algorithm. A leaky bucket refused it.
func TestZeroQuotaAdmitsZeroCost(t *testing.T) {
	for _, alg := range []ratelimittest.Algorithm{
		ratelimittest.FixedWindow, ratelimittest.FixedWindowFromFirst, ratelimittest.SlidingLog, ratelimittest.SlidingWindow,
		ratelimittest.SlidingWindowRounded, ratelimittest.TokenBucket, ratelimittest.LeakyBucket,
	} {
		t.Run(string(alg), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := client(ratelimittest.NewHandler(ratelimittest.Config{BodySize: -1, Policies: []ratelimittest.Policy{
					{Algorithm: alg, Quota: 0, Window: time.Minute, Unit: "content-bytes"},
				}}))
				for i := range 3 {
					if resp, _ := send(t, c, ""); resp.StatusCode != http.StatusOK {
						t.Fatalf("request %d of no bytes: %d, want 200", i+1, resp.StatusCode)
					}
				}
			})
		})
	}
}

// A refusal's Retry-After is the time until every policy would admit the
// request; one no policy will ever admit (a Quota of 0, a content-bytes
// cost above the whole quota) gets none. Before, it was told 1 s (meant
// for a full Concurrency policy), and a client that waited it out was
// refused again, forever.
func TestRetryAfterOfNeverAdmitted(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  ratelimittest.Config
	}{
		{"quota 0", ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 0, Window: time.Second}}}},
		{"cost above quota", ratelimittest.Config{BodySize: 100, Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Second, Unit: "content-bytes"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := &http.Client{Transport: &ratelimittest.Transport{Handler: ratelimittest.NewHandler(tt.cfg)}}
				resp, err := c.Get("http://api.test/")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if ra := resp.Header.Get("Retry-After"); resp.StatusCode != http.StatusTooManyRequests || ra != "" {
					t.Errorf("%s, Retry-After %q; want a 429 with none", resp.Status, ra)
				}
			})
		})
	}
}

// A Concurrency policy has no reset, and the dialects that cannot omit
// it say one second; OpenAI's, the time until the quota is whole, too.
// Before, OpenAI's said "0s": go again at once.
func TestConcurrencyResetOneSecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Dialect:  ratelimittest.OpenAI,
			Policies: []ratelimittest.Policy{{Quota: 1, Algorithm: ratelimittest.Concurrency}},
		})
		resp, _ := send(t, client(h), "")
		if got := resp.Header.Get("X-Ratelimit-Reset-Requests"); got != "1s" {
			t.Errorf("OpenAI, a Concurrency policy: X-Ratelimit-Reset-Requests %q, want 1s", got)
		}
	})
}

// nginxModel is ngx_http_limit_req_lookup with nodelay, for one key, as
// nginx's source writes it: rate and burst in thousandths of a request,
// time in whole milliseconds.
type nginxModel struct {
	rate, burst int64 // thousandths
	exists      bool
	excess      int64
	last        int64
}

// admit reports whether nginx admits a request at millisecond m, and counts it if so.
func (n *nginxModel) admit(m int64) bool {
	if !n.exists {
		n.exists, n.excess, n.last = true, 0, m
		return true
	}
	ms := m - n.last
	excess := n.excess - n.rate*ms/1000 + 1000
	if excess < 0 {
		excess = 0
	}
	if excess > n.burst {
		return false
	}
	n.excess = excess
	if ms != 0 {
		n.last = m
	}
	return true
}

// TestLeakyBucketAgainstNginx replays random traffic on leaky buckets and
// compares each answer with nginxModel's, rates nginx rounds down included
// (1 a minute is 16 thousandths of a request a second).
func TestLeakyBucketAgainstNginx(t *testing.T) {
	cases := []struct {
		quota  int64
		window time.Duration
		burst  int64
		rate   int64
	}{
		{2, time.Second, 0, 2000},
		{2, time.Second, 3, 2000},
		{30, time.Minute, 5, 500},
		{1, time.Minute, 2, 16},
		{10, time.Second, 20, 10000},
	}
	for ci, cs := range cases {
		for seed := range 20 {
			t.Run(fmt.Sprintf("%d/%d", ci, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(seed), 11))
					h := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{{
						Algorithm: ratelimittest.LeakyBucket, Quota: cs.quota, Window: cs.window, Burst: cs.burst}}})
					c := client(h)
					ref := &nginxModel{rate: cs.rate, burst: cs.burst * 1000}
					start := time.Now()
					for i := range 200 {
						gap := time.Duration(rng.IntN(int(cs.window/time.Duration(cs.quota)/time.Microsecond)*2)) * time.Microsecond
						if rng.IntN(4) == 0 {
							gap = 0
						}
						time.Sleep(gap)
						m := int64(time.Since(start) / time.Millisecond)
						want := ref.admit(m)
						resp, _ := send(t, c, "")
						if got := resp.StatusCode == 200; got != want {
							t.Fatalf("request %d at %v: admitted %v, nginx %v", i, time.Since(start), got, want)
						}
					}
				})
			})
		}
	}
}

// TestAlgorithmsAgainstModels replays random traffic and compares each
// answer with a model written from the definitions: a SlidingLog admits a
// request when fewer than Quota were admitted in the last Window, a
// FixedWindow when fewer than Quota were in the current aligned window, a
// TokenBucket when it holds a whole token, counted exactly.
func TestAlgorithmsAgainstModels(t *testing.T) {
	for _, alg := range []ratelimittest.Algorithm{ratelimittest.SlidingLog, ratelimittest.FixedWindow, ratelimittest.TokenBucket} {
		for seed := range 30 {
			t.Run(fmt.Sprintf("%s/%d", alg, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(seed), 13))
					const quota, window = 4, 2 * time.Second
					h := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{{Algorithm: alg, Quota: quota, Window: window}}})
					c := client(h)
					start := time.Now()
					var adm []time.Duration
					// The token bucket model counts in exact units of 1/window tokens.
					tok := int64(quota) * int64(window)
					last := time.Duration(0)
					for i := range 300 {
						time.Sleep(time.Duration(rng.IntN(700)) * time.Millisecond)
						now := time.Since(start)
						var want bool
						switch alg {
						case ratelimittest.SlidingLog:
							n := 0
							for _, a := range adm {
								if a > now-window {
									n++
								}
							}
							want = n < quota
						case ratelimittest.FixedWindow:
							n := 0
							for _, a := range adm {
								if a/window == now/window {
									n++
								}
							}
							want = n < quota
						case ratelimittest.TokenBucket:
							tok = min(tok+int64(now-last)*quota, int64(quota)*int64(window))
							last = now
							want = tok >= int64(window)
						}
						resp, _ := send(t, c, "")
						got := resp.StatusCode == 200
						if got != want {
							t.Fatalf("request %d at %v: admitted %v, want %v", i, now, got, want)
						}
						if got {
							adm = append(adm, now)
							if alg == ratelimittest.TokenBucket {
								tok -= int64(window)
							}
						}
					}
				})
			})
		}
	}
}

// A Handler created in a testing/synctest bubble, whose clock starts in
// 2000, sends epoch resets below 1e9, which parse read as delta seconds
// (30 years) before it took a bare number within a year of the Date as an
// instant.
func TestEpochResetReadBackInBubble(t *testing.T) {
	for _, d := range []ratelimittest.Dialect{ratelimittest.XRateLimitEpoch, ratelimittest.GitHub, ratelimittest.HTTPRate} {
		t.Run(string(d), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewHandler(ratelimittest.Config{
					Dialect:  d,
					Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Minute}},
				})
				c := &http.Client{Transport: &ratelimittest.Transport{Handler: h}}
				time.Sleep(25 * time.Second) // 35 s before the window's end
				resp, _ := send(t, c, "")
				qs := parse.Header(resp.Header, time.Now())
				if len(qs) != 1 {
					t.Fatalf("parse.Header read %d quotas from %v; want 1", len(qs), resp.Header)
				}
				if want := 35 * time.Second; qs[0].Reset != want {
					t.Errorf("X-RateLimit-Reset %s with Date %s: parse.Header reads a reset of %v; want %v",
						resp.Header.Get("X-RateLimit-Reset"), resp.Header.Get("Date"), qs[0].Reset, want)
				}
			})
		})
	}
}
