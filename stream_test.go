package polite_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// streamer streams a body after its headers, as server-sent events: one
// event, then another after the duration in the query's "d" (default
// 1s), or until the request's context ends. It records when requests
// arrive and the most streams it serves at once.
type streamer struct {
	header http.Header // sent with every response

	mu      sync.Mutex
	now     int
	peak    int
	arrived []time.Time
}

func (s *streamer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d := time.Second
	if v := r.URL.Query().Get("d"); v != "" {
		d, _ = time.ParseDuration(v)
	}
	s.mu.Lock()
	s.arrived = append(s.arrived, time.Now())
	s.now++
	s.peak = max(s.peak, s.now)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.now--
		s.mu.Unlock()
	}()
	for k, v := range s.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, "data: first\n\n")
	http.NewResponseController(w).Flush()
	select {
	case <-time.After(d):
	case <-r.Context().Done():
		return
	}
	io.WriteString(w, "data: last\n\n")
}

func (s *streamer) stats() (peak int, arrived []time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak, append([]time.Time(nil), s.arrived...)
}

// readAll gets url through c with ctx and reads the whole body.
func readAll(t *testing.T, ctx context.Context, c *http.Client, url string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Errorf("GET %s: reading the body: %v", url, err)
	}
}

// A request is in flight until its streamed body is read to its end, for
// every rule that bounds the requests in flight: the Transport's
// MaxConcurrency, the Budget's, and a concurrency policy the server
// states.
func TestStreamHoldsItsSlotUntilTheBodyEnds(t *testing.T) {
	tests := []struct {
		name   string
		tr     func(http.RoundTripper) *polite.Transport
		header http.Header
	}{
		{"Transport.MaxConcurrency", func(base http.RoundTripper) *polite.Transport {
			return &polite.Transport{Base: base, MaxConcurrency: 1}
		}, nil},
		{"Budget.MaxConcurrency", func(base http.RoundTripper) *polite.Transport {
			return &polite.Transport{Base: base, Budget: &polite.Budget{MaxConcurrency: 1}}
		}, nil},
		{"concurrent-requests policy", func(base http.RoundTripper) *polite.Transport {
			return &polite.Transport{Base: base}
		}, http.Header{"Ratelimit-Policy": {`"streams";q=1;qu="concurrent-requests"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &streamer{header: tt.header}
				c := &http.Client{Transport: tt.tr(&ratelimittest.Transport{Handler: srv})}
				start := time.Now()
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() { readAll(t, t.Context(), c, "http://api.test/") })
				}
				wg.Wait()
				if d := time.Since(start); d != 4*time.Second {
					t.Errorf("4 streams of 1s, one at a time, took %v, want 4s", d)
				}
				if peak, _ := srv.stats(); peak != 1 {
					t.Errorf("%d streams at the server at once, want 1", peak)
				}
			})
		})
	}
}

// A body closed before its end frees the slot at once.
func TestStreamClosedEarlyFreesItsSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &streamer{}
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: srv}, MaxConcurrency: 1}}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/?d=1h", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { readAll(t, t.Context(), c, "http://api.test/?d=1s") })
		time.Sleep(3 * time.Second)
		resp.Body.Close()
		resp.Body.Close() // twice: harmless
		wg.Wait()
		_, arrived := srv.stats()
		if len(arrived) != 2 || arrived[1].Sub(arrived[0]) != 3*time.Second {
			t.Errorf("arrivals %v, want the second 3s after the first, when its body was closed", arrived)
		}
	})
}

// A stream that fails ends its request.
func TestStreamThatFailsEndsTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu   sync.Mutex
			sent []time.Time
		)
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			sent = append(sent, time.Now())
			mu.Unlock()
			pr, pw := io.Pipe()
			go func() {
				pw.Write([]byte("data: x\n\n"))
				time.Sleep(2 * time.Second)
				pw.CloseWithError(errors.New("connection reset"))
			}()
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: pr, ContentLength: -1, Request: r}, nil
		})
		c := &http.Client{Transport: &polite.Transport{Base: base, MaxConcurrency: 1}}
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
				resp, err := c.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body) // fails after 2s; not closed
			})
		}
		wg.Wait()
		if len(sent) != 2 || sent[1].Sub(sent[0]) != 2*time.Second {
			t.Errorf("sent at %v, want the second 2s after the first, when its stream failed", sent)
		}
	})
}

// The outcome of a streamed response is applied when its headers arrive:
// r=0 pauses the other requests at once, while the body streams on.
func TestStreamOutcomeAppliedWithTheHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &streamer{header: http.Header{
			"Ratelimit-Policy": {`"api";q=10;w=10`},
			"Ratelimit":        {`"api";r=0;t=5`},
		}}
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: srv}}}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/?d=8s", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		start := time.Now()
		srv.header = nil
		readAll(t, t.Context(), c, "http://api.test/?d=0s")
		if d := time.Since(start); d < 5*time.Second || d > 5*time.Second+10*time.Millisecond {
			t.Errorf("second request waited %v, want 5s (r=0;t=5 of a stream still arriving)", d)
		}
	})
}

// A body the caller drops without reading or closing it: its request ends
// when its context ends, and an event says so.
func TestStreamDroppedEndsWithItsContext(t *testing.T) {
	for _, read := range []bool{false, true} {
		name := "never read"
		if read {
			name = "read in part"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &streamer{}
				var ev events
				var logs bytes.Buffer
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: srv}, MaxConcurrency: 1,
					Budget: &polite.Budget{MaxConcurrency: 1}, OnEvent: ev.on,
					Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))}
				c := &http.Client{Transport: tr}
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/?d=1h", nil)
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if read {
					resp.Body.Read(make([]byte, 4))
				}
				start := time.Now()
				readAll(t, t.Context(), c, "http://api.test/?d=0s")
				if d := time.Since(start); d != 2*time.Second {
					t.Errorf("second request waited %v, want 2s, when the first one's context ended", d)
				}
				synctest.Wait()
				got := ev.of(polite.EventAbandoned)
				switch {
				case read && len(got) != 0:
					t.Errorf("%d abandoned events for a body being read when its context ended, want 0", len(got))
				case !read && len(got) != 1:
					t.Errorf("%d abandoned events, want 1", len(got))
				case !read && (got[0].Wait != 2*time.Second || got[0].Status != 200 || got[0].Key != "http://api.test" || got[0].Attempt != 1):
					// Attempt was 0 before, and the log record had no wait.
					t.Errorf("abandoned event %+v, want Wait 2s, Status 200, Key http://api.test, Attempt 1", got[0])
				case !read && (!strings.Contains(logs.String(), "attempt=1") || !strings.Contains(logs.String(), "wait=2s")):
					t.Errorf("log %q, want the abandoned request's attempt=1 and wait=2s", logs.String())
				}
			})
		})
	}
}

// A body the caller drops, with a context that never ends: its request
// ends when its lease expires, and an event says so. Closing it later
// frees nothing twice.
func TestStreamDroppedEndsWithItsLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &streamer{}
		var ev events
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: srv}, MaxConcurrency: 1,
			Budget: &polite.Budget{MaxConcurrency: 1, Lease: 16 * time.Second}, OnEvent: ev.on}
		c := &http.Client{Transport: tr}
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test/?d=1h", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		readAll(t, t.Context(), c, "http://api.test/?d=0s")
		if d := time.Since(start); d < 16*time.Second || d > 17*time.Second {
			t.Errorf("second request waited %v, want the first one's lease (16s to 17s)", d)
		}
		synctest.Wait() // the lease's end, which let it go, is the event's too
		if got := ev.of(polite.EventAbandoned); len(got) != 1 {
			t.Errorf("%d abandoned events, want 1", len(got))
		}
		resp.Body.Close()
		// One slot still: two more requests go one after the other.
		start = time.Now()
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { readAll(t, t.Context(), c, "http://api.test/?d=1s") })
		}
		wg.Wait()
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("two streams of 1s took %v, want 2s, one at a time", d)
		}
		if got := ev.of(polite.EventAbandoned); len(got) != 1 {
			t.Errorf("%d abandoned events, want still 1", len(got))
		}
	})
}

// A response that arrives whole with its headers ends its request at once:
// the caller may keep its body unread without holding a slot.
func TestSmallBodyEndsWithTheHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxConcurrency: 1}}
		var bodies []io.ReadCloser
		for range 3 {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, resp.Body)
		}
		for _, b := range bodies {
			b.Close()
		}
	})
}

// countingStore is a Store that counts its Updates.
type countingStore struct {
	polite.MemoryStore
	mu      sync.Mutex
	updates int
}

func (s *countingStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	s.mu.Lock()
	s.updates++
	s.mu.Unlock()
	return s.MemoryStore.Update(ctx, key, fn)
}

func (s *countingStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updates
}

// On a Store, a request whose body arrives with its headers costs two
// Updates (start, end); one whose body streams, three.
func TestStreamCostsOneMoreUpdate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &countingStore{}
		srv := &streamer{}
		small := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/stream" {
				srv.ServeHTTP(w, r)
				return
			}
			io.WriteString(w, strings.Repeat("x", 1000))
		})
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: small}, Budget: &polite.Budget{Store: store}}}
		readAll(t, t.Context(), c, "http://api.test/")
		if n := store.count(); n != 2 {
			t.Errorf("a small body: %d Updates, want 2", n)
		}
		readAll(t, t.Context(), c, "http://api.test/stream")
		if n := store.count() - 2; n != 3 {
			t.Errorf("a streamed body: %d Updates, want 3", n)
		}
	})
}

// A refusal whose body trickles in (a byte every 100ms) is drained for at
// most a second before the retry, not for its whole length.
func TestRefusalDrainBoundedInTime(t *testing.T) {
	for _, problem := range []bool{false, true} {
		name := "text"
		if problem {
			name = "problem+json"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewHandler(ratelimittest.Config{
					Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 1, Window: 2 * time.Second}},
					Dialect:  ratelimittest.RetryAfterOnly,
					Drip:     100 * time.Millisecond,
					Problem:  problem,
				})
				c, _ := politeOver(h)
				get(t, c, "http://api.test/")
				start := time.Now()
				if code, _ := get(t, c, "http://api.test/"); code != 200 {
					t.Errorf("status %d, want 200 after a retry", code)
				}
				// The server's Retry-After is 2s; the drain runs within it.
				// Its problem document, if any, is read for a second first.
				limit := 2*time.Second + 50*time.Millisecond
				if problem {
					limit += time.Second
				}
				d := time.Since(start)
				t.Logf("a refused request with a dripping body, retried: %v", d)
				if d > limit {
					t.Errorf("a refused request with a dripping body took %v, want at most %v", d, limit)
				}
				if s := h.Stats(); s.Refused != 1 {
					t.Errorf("%d refusals, want 1", s.Refused)
				}
			})
		})
	}
}

// A response whose body ends with its headers costs no allocation in the
// Transport: the body is handed over as it is.
func TestBodyWithHeadersAllocatesNothing(t *testing.T) {
	h := http.Header{"Content-Type": {"text/plain"}, "Date": {"Sun, 29 Nov 2026 22:00:00 GMT"}}
	for _, tt := range []struct {
		name   string
		body   io.ReadCloser
		length int64
	}{
		{"no body", http.NoBody, 0},
		{"small body", io.NopCloser(strings.NewReader("ok")), 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: 200, Header: h, Body: tt.body, ContentLength: tt.length}
			tr := &polite.Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })}
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			tr.RoundTrip(req) // the key's first request creates its state
			allocs := testing.AllocsPerRun(1000, func() {
				got, err := tr.RoundTrip(req)
				if err != nil || got.Body != tt.body {
					t.Fatalf("RoundTrip = %v, %v; want the body handed over as it is", got, err)
				}
			})
			if allocs != 0 {
				t.Errorf("%v allocations per request, want 0", allocs)
			}
		})
	}
}

// Reading the rate-limit fields servers send most costs the Transport no
// allocation either: the quotas are read into a buffer on the request's
// stack. Before, each response with quotas allocated them (1 allocation,
// 112 bytes for one quota, 208 for OpenAI's two).
func TestQuotasAllocateNothing(t *testing.T) {
	reset := strconv.FormatInt(time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC).Unix(), 10)
	for _, tt := range []struct {
		name   string
		fields map[string]string
	}{
		{"ietf", map[string]string{"RateLimit-Policy": `"api";q=1000000000;w=1`, "RateLimit": `"api";r=999999999;t=1`}},
		{"github", map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4999", "X-RateLimit-Reset": reset, "X-RateLimit-Used": "1", "X-RateLimit-Resource": "core"}},
		{"openai", map[string]string{
			"X-Ratelimit-Limit-Requests": "10000", "X-Ratelimit-Limit-Tokens": "200000",
			"X-Ratelimit-Remaining-Requests": "9987", "X-Ratelimit-Remaining-Tokens": "199996",
			"X-Ratelimit-Reset-Requests": "1m51.535s", "X-Ratelimit-Reset-Tokens": "1ms",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {"text/plain"}, "Date": {"Sun, 29 Nov 2026 22:00:00 GMT"}}
			for k, v := range tt.fields {
				h.Set(k, v)
			}
			resp := &http.Response{StatusCode: 200, Header: h, Body: http.NoBody}
			tr := &polite.Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })}
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			tr.RoundTrip(req)
			if st, _ := tr.Inspect("http://api.test", time.Now()); len(st.Policies) == 0 {
				t.Fatalf("no policy read from %v", h)
			}
			if allocs := testing.AllocsPerRun(1000, func() { tr.RoundTrip(req) }); allocs != 0 {
				t.Errorf("%v allocations per request, want 0", allocs)
			}
		})
	}
}

// emptyBody is a request body that can be sent any number of times: it is
// empty, and its Close does nothing.
type emptyBody struct{}

func (emptyBody) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyBody) Close() error             { return nil }

// A request with a body to a path that is no LLM API (an upload, a form
// POST), under the default estimate, costs no allocation in the Transport:
// the estimate returns before any GetBody. A closure for Transport.Cost's
// copy of the request, declared in the same function, moved the variable
// it captured to the heap on every call, whichever branch ran.
func TestBodyRequestAllocatesNothing(t *testing.T) {
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody}
	tr := &polite.Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })}
	u, _ := url.Parse("http://api.test/upload")
	req := (&http.Request{Method: http.MethodPost, URL: u, Header: http.Header{}, Body: emptyBody{}, Host: "api.test"}).WithContext(t.Context())
	tr.RoundTrip(req) // the key's first request creates its state
	if allocs := testing.AllocsPerRun(1000, func() { tr.RoundTrip(req) }); allocs != 0 {
		t.Errorf("%v allocations per POST with a body, want 0", allocs)
	}
}
