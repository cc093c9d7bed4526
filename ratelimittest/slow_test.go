package ratelimittest_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// timed wraps h and records, in *returned, how long after start each call
// of ServeHTTP returned.
func timed(h http.Handler, start time.Time, mu *sync.Mutex, returned *[]time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		mu.Lock()
		*returned = append(*returned, time.Since(start))
		mu.Unlock()
	})
}

// equalAny reports whether a and b are deeply equal.
func equalAny(a, b any) bool { return reflect.DeepEqual(a, b) }

// get sends a GET with ctx to c and returns the response, its body unread.
func get(t *testing.T, c *http.Client, ctx context.Context) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/items", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	return resp
}

func TestDrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var returned []time.Duration
		start := time.Now()
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies:  []ratelimittest.Policy{{Quota: 1, Window: time.Minute}},
			Drip:      100 * time.Millisecond,
			DripBytes: 30,
		})
		c := client(timed(h, start, &mu, &returned))
		send(t, c, "")

		resp := get(t, c, t.Context())
		if got := time.Since(start); got != 0 {
			t.Errorf("refusal header after %v, want at once", got)
		}
		got := []any{resp.StatusCode, resp.ContentLength, resp.Header.Get("Content-Length"), resp.Header.Get("Retry-After")}
		if want := []any{429, int64(-1), "", "60"}; !equalAny(got, want) {
			t.Errorf("refusal %v, want %v", got, want)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "Too Many Requests\n" + strings.Repeat("\n", 12); string(body) != want || err != nil {
			t.Errorf("body %q, %v; want %q", body, err, want)
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("body read after %v, want 3s: 30 bytes, one every 100ms", got)
		}
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if want := []time.Duration{0, 3 * time.Second}; !equalAny(returned, want) {
			t.Errorf("Handler returned after %v, want %v", returned, want)
		}
	})
}

// TestDripStops checks that a dripping refusal ends when its client stops
// reading: when it closes the body, or when its context ends.
func TestDripStops(t *testing.T) {
	for _, how := range []string{"close", "context"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var returned []time.Duration
				start := time.Now()
				h := ratelimittest.NewHandler(ratelimittest.Config{
					Policies: []ratelimittest.Policy{{Quota: 0, Window: time.Minute}},
					Problem:  true,
					Drip:     100 * time.Millisecond,
				})
				c := client(timed(h, start, &mu, &returned))
				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				defer cancel()
				resp := get(t, c, ctx)
				if got := resp.Header.Get("Content-Type"); got != "application/problem+json" {
					t.Errorf("Content-Type %q, want application/problem+json", got)
				}
				b := make([]byte, 5)
				if _, err := io.ReadFull(resp.Body, b); err != nil || string(b) != `{"typ` {
					t.Errorf("first bytes %q, %v; want {\"typ", b, err)
				}
				if how == "close" {
					resp.Body.Close()
				} else if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("reading past the deadline: %v, want context.DeadlineExceeded", err)
				}
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				want := 500 * time.Millisecond
				if how == "context" {
					want = time.Second
				}
				if len(returned) != 1 || returned[0] != want {
					t.Errorf("Handler returned after %v, want %v", returned, want)
				}
			})
		})
	}
}

func TestHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies:     []ratelimittest.Policy{{Quota: 2, Window: time.Minute}},
			Hang:         5 * time.Second,
			HangRequests: 2,
		})
		c := client(h)
		start := time.Now()
		var mu sync.Mutex
		took := map[int]time.Duration{}
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Go(func() {
				resp, _ := send(t, c, "")
				mu.Lock()
				took[i] = time.Since(start)
				mu.Unlock()
				if i == 2 && resp.StatusCode != http.StatusOK {
					t.Errorf("third request: status %d, want 200", resp.StatusCode)
				}
			})
			synctest.Wait() // keep arrivals in order
		}
		wg.Wait()
		if want := map[int]time.Duration{0: 5 * time.Second, 1: 5 * time.Second, 2: 0}; !maps.Equal(took, want) {
			t.Errorf("requests took %v, want %v", took, want)
		}
		// The third took one of the two admissions; the hung requests
		// reach the policies after their hang, and one is refused.
		s := h.Stats()
		if want := map[int]int{200: 2, 429: 1}; s.Hung != 2 || s.Requests != 3 || !maps.Equal(s.Status, want) {
			t.Errorf("Stats = %+v, want 2 hung, 3 requests, Status %v", s, want)
		}
		for i, a := range s.Arrivals {
			if !a.Equal(start) {
				t.Errorf("Arrivals[%d] at %v, want at once", i, a.Sub(start))
			}
		}

		h.Reset()
		before := time.Now()
		send(t, c, "")
		if got := time.Since(before); got != 5*time.Second {
			t.Errorf("first request after Reset took %v, want 5s", got)
		}
	})
}

func TestHangUntilContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{Hang: -1})
		c := client(h)
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/", nil)
		if resp, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Do = %v, %v; want context.DeadlineExceeded", resp, err)
		}
		if got := time.Since(start); got != time.Hour {
			t.Errorf("hung for %v, want the hour of its context", got)
		}
		if resp, _ := send(t, c, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("second request: status %d, want 200", resp.StatusCode)
		}
		if got := time.Since(start); got != time.Hour {
			t.Errorf("second request answered at %v, want at once", got)
		}
		if s := h.Stats(); s.Hung != 1 || s.Requests != 2 || s.Admitted != 1 || s.Status[200] != 1 || len(s.Status) != 1 {
			t.Errorf("Stats = %+v, want 1 hung of 2 requests, 1 admitted and answered", s)
		}
	})
}

// readEvents reads the server-sent events of body and reports when each
// arrived, after start.
func readEvents(t *testing.T, body io.Reader, start time.Time) (events []string, at []time.Duration) {
	t.Helper()
	r := bufio.NewReader(body)
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			return events, at
		}
		if err != nil {
			t.Fatalf("reading events: %v", err)
		}
		if line == "\n" {
			continue
		}
		events = append(events, strings.TrimSuffix(line, "\n"))
		at = append(at, time.Since(start))
	}
}

// TestStream checks a streamed response and that a concurrency policy
// counts a request until its body is written.
func TestStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies:     []ratelimittest.Policy{{Name: "streams", Algorithm: ratelimittest.Concurrency, Quota: 2}},
			Stream:       600 * time.Millisecond,
			StreamEvents: 3,
		})
		c := client(h)
		start := time.Now()
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				resp := get(t, c, t.Context())
				defer resp.Body.Close()
				got := []any{resp.StatusCode, resp.ContentLength, resp.TransferEncoding, resp.Header.Get("Content-Type"), resp.Header.Get("RateLimit"), time.Since(start)}
				want := []any{200, int64(-1), []string{"chunked"}, "text/event-stream", "", time.Duration(0)}
				if !equalAny(got[:4], want[:4]) || got[5] != want[5] {
					t.Errorf("streamed response %v, want %v", got, want)
				}
				events, at := readEvents(t, resp.Body, start)
				wantAt := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 600 * time.Millisecond}
				if !equalAny(events, []string{"data: ok", "data: ok", "data: ok"}) || !equalAny(at, wantAt) {
					t.Errorf("events %q at %v, want 3 × \"data: ok\" at %v", events, at, wantAt)
				}
			})
		}
		synctest.Wait() // both streams have their headers

		time.Sleep(100 * time.Millisecond)
		resp, _ := send(t, c, "")
		if got, want := resp.Header.Get("RateLimit"), `"streams";r=0`; resp.StatusCode != http.StatusTooManyRequests || got != want {
			t.Errorf("third request while two stream: %d %q, want 429 %q", resp.StatusCode, got, want)
		}
		wg.Wait()
		resp = get(t, c, t.Context())
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || time.Since(start) != 1200*time.Millisecond {
			t.Errorf("request after the streams: %d, ended at %v; want 200 at 1.2s", resp.StatusCode, time.Since(start))
		}
		if s := h.Stats(); s.PeakInFlight != 2 || s.Admitted != 3 || s.Refused != 1 || s.Bytes != 90 {
			t.Errorf("Stats = %+v, want peak 2 in flight, 3 admitted, 1 refused, 90 bytes", s)
		}
	})
}

// TestStreamReleased checks that a stream the client abandons frees its
// concurrency slot at once: when it closes the body, or when the request's
// context ends though the body is never read.
func TestStreamReleased(t *testing.T) {
	for _, how := range []string{"close", "context"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewHandler(ratelimittest.Config{
					Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.Concurrency, Quota: 1}},
					Stream:   time.Minute,
				})
				c := client(h)
				ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
				defer cancel()
				resp := get(t, c, ctx)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d, want 200", resp.StatusCode)
				}
				if how == "close" {
					time.Sleep(100 * time.Millisecond)
					resp.Body.Close()
				} else {
					time.Sleep(300 * time.Millisecond)
				}
				synctest.Wait()
				if resp, _ := send(t, c, ""); resp.StatusCode != http.StatusOK {
					t.Errorf("request after the stream was abandoned (%s): status %d, want 200", how, resp.StatusCode)
				}
				resp.Body.Close()
			})
		})
	}
}

// TestStreamIdealReached runs a client that keeps two streams at a time and
// reads each to its end, against the server: it is never refused
// and takes exactly what Ideal says.
func TestStreamIdealReached(t *testing.T) {
	cfg := ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Name: "streams", Algorithm: ratelimittest.Concurrency, Quota: 2}},
		Stream:   600 * time.Millisecond,
	}
	want := ratelimittest.Ideal(cfg, 16, 8)
	if want != 4800*time.Millisecond {
		t.Fatalf("Ideal = %v, want 4.8s", want)
	}
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(cfg)
		c := client(h)
		start := time.Now()
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for range 8 {
					resp, _ := send(t, c, "")
					if resp.StatusCode != http.StatusOK {
						t.Errorf("status %d, want 200", resp.StatusCode)
					}
				}
			})
		}
		wg.Wait()
		if got := time.Since(start); got != want {
			t.Errorf("client took %v, Ideal says %v", got, want)
		}
		if s := h.Stats(); s.Refused != 0 || s.PeakInFlight != 2 {
			t.Errorf("Stats = %+v, want no refusal, peak 2 in flight", s)
		}
	})
}

// TestStreamContentBytes checks that a "content-bytes" policy is charged
// the whole streamed body, framing included, at admission.
func TestStreamContentBytes(t *testing.T) {
	resps := threeResponses(t, ratelimittest.Config{
		Policies:     []ratelimittest.Policy{{Quota: 60, Window: time.Minute, Unit: "content-bytes"}},
		Stream:       time.Second,
		StreamEvents: 3,
		BodySize:     5, // "data: okoko\n\n": 13 bytes an event, 39 a stream
	})
	got := []string{resps[0].Header.Get("RateLimit"), resps[1].Header.Get("RateLimit")}
	// The first stream takes a second: the second request comes 34s
	// before the window's end.
	if want := []string{`"default";r=21;t=35`, `"default";r=21;t=34`}; !equalAny(got, want) {
		t.Errorf("RateLimit %q, want %q", got, want)
	}
	if resps[1].StatusCode != http.StatusTooManyRequests {
		t.Errorf("second stream: status %d, want 429", resps[1].StatusCode)
	}
}

// TestStreamServer checks over loopback that the stream is flushed: the
// response comes chunked, without Content-Length.
func TestStreamServer(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{Stream: time.Nanosecond, StreamEvents: 2})
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	got := []any{resp.StatusCode, resp.ContentLength, resp.TransferEncoding, string(body), err}
	if want := []any{200, int64(-1), []string{"chunked"}, "data: ok\n\ndata: ok\n\n", nil}; !equalAny(got, want) {
		t.Errorf("response %v, want %v", got, want)
	}
	if s := srv.Handler.Stats(); s.Bytes != 20 || s.PeakInFlight != 1 {
		t.Errorf("Stats = %+v, want 20 bytes, peak 1 in flight", s)
	}
}

// A request Hang holds across a Reset is answered 503, as by a server that
// restarted, and counted in none of the new Stats or counters. Before, it
// was admitted into the new Stats (Admitted 1, Requests 0) and spent the
// new quota.
func TestHangAcrossReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Hang:     10 * time.Second,
			Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Hour}},
		})
		c := client(h)
		done := make(chan int)
		go func() {
			resp, _ := send(t, c, "")
			done <- resp.StatusCode
		}()
		time.Sleep(5 * time.Second)
		h.Reset()
		if code := <-done; code != http.StatusServiceUnavailable {
			t.Errorf("the request held across the Reset: %d, want 503", code)
		}
		if s := h.Stats(); s.Requests != 0 || s.Admitted != 0 {
			t.Errorf("Stats after the Reset: Requests %d, Admitted %d; want 0 and 0", s.Requests, s.Admitted)
		}
		if resp, _ := send(t, c, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("the first request after the Reset: %d, want 200", resp.StatusCode)
		}
	})
}
