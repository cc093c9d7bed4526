package polite_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// The tests of Transport.Robots and Transport.Restraint: a crawler's
// politeness, end to end, in synctest bubbles.

// maxIn returns the most times of ts (in order) within any span shorter
// than d.
func maxIn(ts []time.Time, d time.Duration) int {
	most, j := 0, 0
	for i := range ts {
		for ts[i].Sub(ts[j]) >= d {
			j++
		}
		most = max(most, i-j+1)
	}
	return most
}

// TestTransportCrawlDelay runs 16 workers for 10 seconds against an
// origin whose robots.txt asks for Crawl-delay: 0.5.
func TestTransportCrawlDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nCrawl-delay: 0.5\n"})
		var mu sync.Mutex
		reasons := map[polite.Reason]int{}
		tr := &polite.Transport{
			Base:   &ratelimittest.Transport{Handler: h},
			Robots: &polite.Robots{UserAgent: "mybot"},
			OnEvent: func(e polite.Event) {
				if e.Kind == polite.EventWait {
					mu.Lock()
					reasons[e.Reason]++
					mu.Unlock()
				}
			},
		}
		n := loop(t, tr, "http://a.example/page", "", 16, 10*time.Second)
		st := h.Stats()
		most := maxIn(st.Arrivals, time.Second)
		t.Logf("Crawl-delay 0.5, 16 workers, 10s: %d requests reached the origin (%d answered), at most %d in any second; robots.txt fetched %d times; waits by reason %v",
			st.Requests, n, most, st.Fetches, reasons)
		if most > 2 {
			t.Errorf("%d requests within one second, want at most 2", most)
		}
		if st.Requests < 20 || st.Requests > 21 {
			t.Errorf("%d requests in 10s, want one every 0.5s from 0s to 10s (20 or 21)", st.Requests)
		}
		if st.Fetches != 1 {
			t.Errorf("robots.txt fetched %d times, want once", st.Fetches)
		}
		if reasons[polite.ReasonCrawlDelay] == 0 {
			t.Errorf("waits by reason %v, want some for %q", reasons, polite.ReasonCrawlDelay)
		}
	})
}

// TestTransportCrawlDelayHeadersWin checks that rate-limit fields allowing
// less than Crawl-delay pace the origin, and that Crawl-delay still
// spaces the requests the fields allow.
func TestTransportCrawlDelayHeadersWin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limited := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Quota: 5, Window: 10 * time.Second}},
		})
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nCrawl-delay: 0.5\n", Next: limited})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Robots: &polite.Robots{}}
		n := loop(t, tr, "http://a.example/page", "", 16, 30*time.Second)
		st, lst := h.Stats(), limited.Stats()
		t.Logf("Crawl-delay 0.5 under RateLimit-Policy q=5;w=10, 16 workers, 30s: %d requests (%d answered), %d refused, at most %d in any 10s, at most %d in any second",
			st.Requests, n, lst.Refused, maxIn(st.Arrivals, 10*time.Second), maxIn(st.Arrivals, time.Second))
		if lst.Refused != 0 {
			t.Errorf("%d refused, want 0", lst.Refused)
		}
		if most := maxIn(st.Arrivals, 10*time.Second); most > 5 {
			t.Errorf("%d requests within 10s, want at most the 5 the fields allow", most)
		}
		if most := maxIn(st.Arrivals, 500*time.Millisecond); most > 1 {
			t.Errorf("%d requests within 0.5s, want Crawl-delay to space them", most)
		}
		if st.Requests < 10 {
			t.Errorf("%d requests in 30s, want at least 10 (5 per 10s)", st.Requests)
		}
	})
}

// TestTransportRobotsOncePerOrigin sends 1000 requests to 50 origins at
// once, a tenth of them to a path robots.txt disallows.
func TestTransportRobotsOncePerOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Delay: time.Second, Body: "User-agent: *\nDisallow: /no\n"})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Robots: &polite.Robots{}}
		var disallowed, ok, other atomic.Int64
		round := func() {
			var wg sync.WaitGroup
			for i := range 1000 {
				wg.Go(func() {
					path := "/yes"
					if i%10 == 0 {
						path = "/no"
					}
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("http://o%d.example%s", i%50, path), nil)
					resp, err := tr.RoundTrip(req)
					var rerr *polite.RobotsError
					switch {
					case err == nil:
						resp.Body.Close()
						ok.Add(1)
					case errors.As(err, &rerr) && rerr.Rule == "/no" && errors.Is(err, polite.ErrDisallowed):
						disallowed.Add(1)
					default:
						t.Errorf("%s: %v", req.URL, err)
						other.Add(1)
					}
				})
			}
			wg.Wait()
		}
		round()
		st := h.Stats()
		t.Logf("1000 requests to 50 origins: robots.txt fetched %d times (%d origins), %d requests reached /no, %d not sent, %d answered",
			st.Fetches, len(st.FetchesByHost), st.Paths["/no"], disallowed.Load(), ok.Load())
		if st.Fetches != 50 || len(st.FetchesByHost) != 50 {
			t.Errorf("robots.txt fetched %d times for %d origins, want once for each of 50", st.Fetches, len(st.FetchesByHost))
		}
		if st.Paths["/no"] != 0 || disallowed.Load() != 100 || ok.Load() != 900 {
			t.Errorf("%d reached /no, %d not sent, %d answered; want 0, 100, 900", st.Paths["/no"], disallowed.Load(), ok.Load())
		}

		// Within the cache period, no fetch; after it, one per origin.
		time.Sleep(23 * time.Hour)
		round()
		if got := h.Stats().Fetches; got != 50 {
			t.Errorf("%d fetches after 23 hours, want still 50", got)
		}
		time.Sleep(time.Hour)
		round()
		st = h.Stats()
		if st.Fetches != 100 || st.Paths["/no"] != 0 {
			t.Errorf("after 24 hours: %d fetches, %d requests reached /no; want 100 and 0", st.Fetches, st.Paths["/no"])
		}
	})
}

// TestTransportRobotsUnreachable runs 16 workers for 5 minutes against an
// origin whose robots.txt answers 503 for its first 150 seconds, then
// 200 (or 404): no other request reaches the origin before robots.txt
// answers so.
func TestTransportRobotsUnreachable(t *testing.T) {
	for _, then := range []int{http.StatusOK, http.StatusNotFound} {
		t.Run(fmt.Sprint(then), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Status: http.StatusServiceUnavailable})
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Robots: &polite.Robots{}}
				start := time.Now()
				time.AfterFunc(150*time.Second, func() {
					h.Set(ratelimittest.RobotsConfig{Status: then, Body: "User-agent: *\nDisallow: /private/\n"})
				})
				end := start.Add(5 * time.Minute)
				var refused atomic.Int64
				var wg sync.WaitGroup
				for range 16 {
					wg.Go(func() {
						for time.Now().Before(end) {
							req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.example/page", nil)
							resp, err := tr.RoundTrip(req)
							var rerr *polite.RobotsError
							switch {
							case err == nil:
								resp.Body.Close()
								time.Sleep(time.Second)
							case errors.As(err, &rerr) && rerr.Unreachable && rerr.Status == http.StatusServiceUnavailable:
								refused.Add(1)
								time.Sleep(max(time.Until(rerr.Until), time.Second))
							default:
								t.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				st := h.Stats()
				var at []time.Duration
				for _, f := range st.FetchTimes {
					at = append(at, f.Sub(start))
				}
				t.Logf("robots.txt 503 until 150s, then %d: fetched at %v; %d requests not sent; first other request at %v; %d in all",
					then, at, refused.Load(), st.Arrivals[0].Sub(start), st.Requests)
				// 503 at 0s and 60s (then 2 minutes), the answer at 180s.
				if len(at) != 3 || at[2] != 180*time.Second {
					t.Fatalf("robots.txt fetched at %v, want at 0s, 1m0s and 3m0s", at)
				}
				if first := st.Arrivals[0]; first.Before(st.FetchTimes[2]) {
					t.Errorf("a request reached the origin at %v, before robots.txt answered %d at %v", first.Sub(start), then, at[2])
				}
				if st.Requests < 16*100 {
					t.Errorf("%d requests after robots.txt answered, want the 16 workers going on (at least 1600)", st.Requests)
				}
			})
		})
	}
}

// TestTransportRobotsRequest checks what a request robots.txt disallows
// becomes: an error through http.Client, its body closed, and nothing sent.
func TestTransportRobotsRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: mybot\nDisallow: /private/\n"})
		client := polite.NewClient(&polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Robots: &polite.Robots{UserAgent: "mybot"}})
		body := &closeCounter{Reader: strings.NewReader("payload")}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://a.example/private/form?token=secret", body)
		req.Header.Set("User-Agent", "mybot/1.0")
		_, err := client.Do(req)
		var rerr *polite.RobotsError
		if !errors.As(err, &rerr) || rerr.Agent != "mybot" || rerr.Rule != "/private/" || rerr.Origin != "http://a.example" {
			t.Fatalf("Do = %v, want a *RobotsError naming rule /private/ of group mybot", err)
		}
		if body.closed == 0 {
			t.Error("the request body was not closed")
		}
		if strings.Contains(rerr.Error(), "secret") {
			t.Errorf("error %q shows the query", rerr)
		}
		if st := h.Stats(); st.Requests != 0 {
			t.Errorf("%d requests sent, want 0", st.Requests)
		}
		// Another agent's rules do not apply to a Transport without one.
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Robots: &polite.Robots{}}
		req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.example/private/x", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip without UserAgent = %v, want allowed (only mybot's group disallows)", err)
		}
		resp.Body.Close()
	})
}

type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// TestRestraintCap checks that Restraint caps an origin that states
// nothing, and lets go of one that states a quota.
func TestRestraintCap(t *testing.T) {
	tests := []struct {
		name      string
		restraint *polite.Restraint
		maxConc   int
		stated    bool
		d         time.Duration
		want      int
	}{
		{"nil: no cap", nil, 0, false, 2 * time.Second, 16},
		{"zero value: 4", &polite.Restraint{}, 0, false, 2 * time.Second, 4},
		{"MaxConcurrency 2", &polite.Restraint{MaxConcurrency: 2}, 0, false, 2 * time.Second, 2},
		{"Transport.MaxConcurrency lower", &polite.Restraint{MaxConcurrency: 8}, 3, false, 2 * time.Second, 3},
		// While the first 64 responses measure the baseline.
		{"Adaptive starts at 4", &polite.Restraint{MaxConcurrency: 16, Adaptive: true}, 0, false, time.Second, 4},
		// Then it grows by one a round trip, up to MaxConcurrency.
		{"Adaptive grows", &polite.Restraint{MaxConcurrency: 16, Adaptive: true}, 0, false, 5 * time.Second, 16},
		{"an origin that states a quota", &polite.Restraint{}, 0, true, 2 * time.Second, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := ratelimittest.Config{Latency: 100 * time.Millisecond}
				if tt.stated {
					cfg.Policies = []ratelimittest.Policy{{Quota: 100_000, Window: time.Second}}
				}
				h := ratelimittest.NewHandler(cfg) // without policies, it states nothing
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Restraint: tt.restraint, MaxConcurrency: tt.maxConc}
				loop(t, tr, "http://a.example/", "", 16, tt.d)
				if got := h.Stats().PeakInFlight; got != tt.want {
					t.Errorf("peak in flight %d, want %d", got, tt.want)
				}
			})
		})
	}
}

// TestRestraintQueueServer runs 64 workers for 10 seconds against
// ratelimittest's queue server (8 workers of 50ms inside: 160 requests a
// second, queueing beyond), through a Transport with Restraint's latency-
// aware limit and without it.
func TestRestraintQueueServer(t *testing.T) {
	const clients = 64
	tests := []struct {
		name      string
		restraint *polite.Restraint
		adaptive  bool
	}{
		{"Restraint{MaxConcurrency: 64, Adaptive: true}", &polite.Restraint{MaxConcurrency: clients, Adaptive: true}, true},
		{"Restraint{MaxConcurrency: 64}", &polite.Restraint{MaxConcurrency: clients}, false},
		{"no Restraint", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewQueueHandler(ratelimittest.QueueConfig{QueueLen: 4 * clients})
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Restraint: tt.restraint}
				loop(t, tr, "http://q.example/", "", clients, 10*time.Second)
				st := h.Stats()
				base := 50 * time.Millisecond
				t.Logf("median latency %v (%.2f× baseline), %.1f req/s (%.2f of capacity), %d served, %d refused, peak %d busy + %d queued",
					st.Median(), float64(st.Median())/float64(base), st.Throughput(), st.Throughput()/h.Capacity(), st.Served, st.Refused, st.PeakBusy, st.PeakQueue)
				if st.Refused != 0 {
					t.Errorf("%d refused, want 0", st.Refused)
				}
				switch {
				case tt.adaptive && (st.Median() > 2*base || st.Throughput() < 0.8*h.Capacity()):
					t.Errorf("median %v at %.1f req/s, want at most 2× %v at 0.8 of %v or more", st.Median(), st.Throughput(), base, h.Capacity())
				case !tt.adaptive && st.Median() < 4*base:
					t.Errorf("median %v without the latency-aware limit, want the queue to grow it (at least 4× %v)", st.Median(), base)
				}
			})
		})
	}
}

// TestRobotsMemoryPerOriginTransport measures the memory a Transport
// with Robots (and Restraint) holds per origin after one request to each
// of 10,000 origins, each with a small robots.txt asking for a
// Crawl-delay.
func TestRobotsMemoryPerOriginTransport(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls 10 000 origins")
	}
	const origins = 10_000
	robots := []byte("User-agent: *\nDisallow: /private/\nDisallow: /search?\nAllow: /search/about\nCrawl-delay: 1\n\nUser-agent: other\nDisallow: /\n")
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		body := io.NopCloser(bytes.NewReader(nil))
		if req.URL.Path == "/robots.txt" {
			body = io.NopCloser(bytes.NewReader(robots))
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: body, Request: req}, nil
	})
	for _, tt := range []struct {
		name      string
		restraint *polite.Restraint
	}{
		{"Robots", nil},
		{"Robots and Restraint{Adaptive: true}", &polite.Restraint{Adaptive: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := &polite.Transport{Base: base, Robots: &polite.Robots{UserAgent: "mybot"}, Restraint: tt.restraint}
			visit(t, tr, 0, 1)
			before := heap()
			visit(t, tr, 1, origins)
			after := heap()
			runtime.KeepAlive(tr)
			per := float64(int64(after)-int64(before)) / (origins - 1)
			t.Logf("%s: bytes per origin %.0f (%d origins: robots.txt, budget state, local ceilings)", tt.name, per, origins)
			if per > 4096 {
				t.Errorf("bytes per origin = %.0f, want at most 4096", per)
			}
		})
	}
}

// BenchmarkOverheadCrawler is BenchmarkOverheadPolite with Robots (its
// robots.txt cached, with rules but no Crawl-delay) and Restraint.
func BenchmarkOverheadCrawler(b *testing.B) {
	for _, tt := range []struct {
		name string
		tr   *polite.Transport
	}{
		{"Robots", &polite.Transport{Robots: &polite.Robots{UserAgent: "mybot"}}},
		{"Restraint", &polite.Transport{Restraint: &polite.Restraint{Adaptive: true}}},
		{"Robots+Restraint", &polite.Transport{Robots: &polite.Robots{UserAgent: "mybot"}, Restraint: &polite.Restraint{Adaptive: true}}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			robots := "User-agent: *\nDisallow: /private/\nDisallow: /*.pdf$\nAllow: /private/ok\n"
			tt.tr.Base = roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if req.URL.Path == "/robots.txt" {
					return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(robots))}, nil
				}
				return &http.Response{StatusCode: 200, Header: plainHeader, Body: http.NoBody}, nil
			})
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/items/42?page=3", nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tt.tr.RoundTrip(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A request held by a concurrency cap (Restraint's, MaxConcurrency) waits
// in line, as one held by the pace does: the slot that frees goes to the
// request held longest. Before, the requests held raced for it, and with
// 16 workers sharing Restraint's 4 slots of a second each, 115-166
// requests in 30 minutes lost the race for a minute and failed with a
// WaitError, while the origin served 4 a second throughout.
func TestConcurrencyHoldsInLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Second)
			io.WriteString(w, "ok\n")
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Restraint: &polite.Restraint{}, MaxWait: time.Minute}
		end := time.Now().Add(30 * time.Minute)
		var (
			mu      sync.Mutex
			longest time.Duration
			ok      int
			failed  []error
			wg      sync.WaitGroup
		)
		for w := range 16 {
			wg.Go(func() {
				for time.Now().Before(end) {
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("http://a.example/w%d", w), nil)
					start := time.Now()
					resp, err := tr.RoundTrip(req)
					mu.Lock()
					longest = max(longest, time.Since(start))
					if err != nil {
						failed = append(failed, err)
					} else {
						ok++
					}
					mu.Unlock()
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					time.Sleep(10 * time.Millisecond) // parse the page
				}
			})
		}
		wg.Wait()
		t.Logf("30 minutes, 16 workers, cap 4, 1 s a page: %d pages, %d failed, longest RoundTrip %v", ok, len(failed), longest)
		if len(failed) > 0 {
			t.Errorf("%d requests failed, the first: %v", len(failed), failed[0])
		}
		if longest > 30*time.Second {
			t.Errorf("longest RoundTrip %v, want about 4 s (16 workers sharing 4 slots of 1 s), at most 30 s", longest)
		}
	})
}
