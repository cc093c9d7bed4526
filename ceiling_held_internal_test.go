package polite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// crawlDelayRobots answers a robots.txt request: a Crawl-delay of 2s
// for slow.test, none for the others.
func crawlDelayRobots(r *http.Request) (*http.Response, bool) {
	if r.URL.Path != "/robots.txt" {
		return nil, false
	}
	body := "User-agent: *\n"
	if r.URL.Host == "slow.test" {
		body += "Crawl-delay: 2\n"
	}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), ContentLength: -1, Request: r}, true
}

// Crawling (doc.go): "its Crawl-delay or Request-rate spaces the origin's
// requests, whatever its rate-limit fields allow". SECURITY.md: the local
// ceilings' entry is "swept once its next start has passed ... since
// dropping it sooner would let the origin's next request go early".
//
// A request held by the budget (here a Retry-After pause) has given its
// ceiling start back, so its entry is idle and a crawler visiting other
// origins sweeps it. When the pause ends, the held requests bring their
// floor back to the entry they reserve on. Before, the floor lived only in
// the entry, set once per RoundTrip before the wait: the requests reserved
// on a fresh entry with no floor, and went back to back, not Crawl-delay
// apart.
func TestCrawlDelayKeptAcrossSweep(t *testing.T) {
	for _, tt := range []struct {
		name string
		key  func(*http.Request) string
	}{
		{"origin keys", nil},
		// A custom Key that returns the origin itself (a Key grouping
		// some hosts and leaving others by origin): the key's
		// reservation carries the floor. Before, try skipped
		// reserveFloor (the key is the origin) and passed floor 0 to
		// reserve: two requests went 0 s apart after a sweep.
		{"a Key returning the origin", func(r *http.Request) string { return r.URL.Scheme + "://" + r.URL.Host }},
	} {
		t.Run(tt.name, func(t *testing.T) { testCrawlDelayKeptAcrossSweep(t, tt.key) })
	}
}

func testCrawlDelayKeptAcrossSweep(t *testing.T, key func(*http.Request) string) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu   sync.Mutex
			sent []time.Time
		)
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			if resp, ok := crawlDelayRobots(r); ok {
				return resp, nil
			}
			if r.URL.Host == "slow.test" {
				mu.Lock()
				sent = append(sent, time.Now())
				n := len(sent)
				mu.Unlock()
				if n == 1 {
					h := http.Header{}
					h.Set("Retry-After", "5")
					return &http.Response{StatusCode: 429, Header: h, Body: http.NoBody, Request: r}, nil
				}
			}
			return okResponse(r)
		})
		tr := &Transport{Base: base, Robots: &Robots{}, MaxAttempts: 1, Key: key}
		get := func(host string) error {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		if err := get("slow.test"); err != nil { // a 429: the origin pauses 5s
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // past the Crawl-delay, within the pause
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if err := get("slow.test"); err != nil {
					t.Error(err)
				}
			})
		}
		synctest.Wait() // both held by the pause (the budget), not the ceiling

		// The crawler goes on with other origins meanwhile; some land in
		// slow.test's shard of the local ceilings.
		sweep(t, tr, "slow.test", func(i int) (memKey, func() error) {
			host := fmt.Sprintf("o%d.test", i)
			return originKey("http", host).m, func() error { return get(host) }
		})
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		lastTwoApart(t, sent)
	})
}

// The same floor, applied to an origin whose requests go under custom keys
// (ceilings.reserveFloor), lives in an entry that never counts a request
// in flight: it is swept whenever its next start has passed, even while a
// request that already set it (robots() runs once per RoundTrip) waits,
// here for its own key's MaxRate. That request brings the floor back.
// Before, it found no floor, took no start of the origin, and the next
// request to the origin, under another key, went at once.
func TestCrawlDelayKeptAcrossSweepCustomKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu   sync.Mutex
			sent []time.Time
		)
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			if resp, ok := crawlDelayRobots(r); ok {
				return resp, nil
			}
			if r.URL.Host == "slow.test" {
				mu.Lock()
				sent = append(sent, time.Now())
				mu.Unlock()
			}
			return okResponse(r)
		})
		// One key per account; each account at most one request per 5s.
		tr := &Transport{Base: base, Robots: &Robots{}, MaxRate: 0.2,
			Key: func(r *http.Request) string { return r.Header.Get("X-Account") }}
		get := func(host, acct string) error {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
			req.Header.Set("X-Account", acct)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		if err := get("slow.test", "acct-a"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // past slow.test's Crawl-delay (2s)
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := get("slow.test", "acct-a"); err != nil { // held by acct-a's MaxRate until 5s
				t.Error(err)
			}
		})
		synctest.Wait()
		sweep(t, tr, "slow.test", func(i int) (memKey, func() error) {
			acct := fmt.Sprintf("acct-%d", i)
			return splitKey(acct), func() error { return get(fmt.Sprintf("o%d.test", i), acct) }
		})
		wg.Wait()
		if err := get("slow.test", "acct-b"); err != nil { // another account, the same origin
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		lastTwoApart(t, sent)
	})
}

// errors.go (WaitError): "A refusal that goes back to the caller as a
// response ... says when its origin accepts a request again through
// Transport.RetryAt: the same instant the WaitError of the next request
// would carry in Until"; doc.go: "its Until and Transport.RetryAt for a
// refusal returned as a response are the same answer to 'when may I
// retry'". RetryAt read only the budget: the Transport's own MaxRate (or
// a Crawl-delay) that holds the next request longer was left out, so the
// caller rescheduled too early and got a WaitError with another Until
// (RetryAt now+5s, Until now+1m). RetryAt now reads the local pace too.
//
// Under a custom Key with MaxRate and a Crawl-delay, the key's pace
// (MaxRate, now+1m) holds the request longer than the origin's floor
// (now+2s). Before, the WaitError carried the floor's next start: try
// returned the first hold it met; RetryAt said now+1m.
func TestRetryAtLocalPace(t *testing.T) {
	for _, tt := range []struct {
		name, host string
		robots     *Robots
		key        func(*http.Request) string
	}{
		{"MaxRate", "api.test", nil, nil},
		{"MaxRate under a custom key, with a Crawl-delay", "slow.test", &Robots{},
			func(r *http.Request) string { return "acct-" + r.Header.Get("X-Account") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripper(func(r *http.Request) (*http.Response, error) {
					if resp, ok := crawlDelayRobots(r); ok {
						return resp, nil
					}
					h := http.Header{}
					h.Set("Retry-After", "5")
					return &http.Response{StatusCode: 429, Header: h, Body: http.NoBody, Request: r}, nil
				})
				tr := &Transport{Base: base, MaxAttempts: 1, MaxRate: 1.0 / 60, Robots: tt.robots, Key: tt.key} // one a minute
				send := func(ctx context.Context, path string) (*http.Response, error) {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+tt.host+path, nil)
					req.Header.Set("X-Account", "a")
					return tr.RoundTrip(req)
				}
				resp, err := send(t.Context(), "/a")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				at, ok := tr.RetryAt(resp)
				if !ok {
					t.Fatal("RetryAt reports false for a 429")
				}
				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				defer cancel()
				_, err = send(ctx, "/b")
				var we *WaitError
				if !errors.As(err, &we) {
					t.Fatalf("next request: %v, want a *WaitError", err)
				}
				if !we.Until.Equal(at) {
					t.Errorf("RetryAt = now+%v, but the next request's WaitError has Until now+%v (%s); want the same instant", time.Until(at), time.Until(we.Until), we.Reason)
				}
			})
		})
	}
}

// Restraint.Adaptive: "The latency of a request is the time from its start
// until its response arrives; refusals and errors are not counted"
// (DESIGN.md §9: "Refusals and errors are not observed"). With
// RetryTransient a 502 is a transient failure like a connection reset, and
// is retried as one; but ceilings.update observes every outcome that is
// neither Failed nor Refused, so a gateway's fast 502s become the origin's
// baseline (a connection reset leaves it alone). When the origin comes
// back at its usual 100ms, never queueing, the limit collapsed to 1 until
// the next measurement. The retried 502s are not observed now.
func TestAdaptiveSkipsTransient502(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var (
			mu             sync.Mutex
			inflight, peak int
		)
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			if time.Since(start) < 5*time.Minute { // the gateway fails fast
				time.Sleep(time.Millisecond)
				return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			mu.Lock()
			inflight++
			if since := time.Since(start); since > 5*time.Minute+30*time.Second && since < 6*time.Minute+30*time.Second {
				peak = max(peak, inflight)
			}
			mu.Unlock()
			time.Sleep(100 * time.Millisecond) // the origin's usual latency, whatever the load
			mu.Lock()
			inflight--
			mu.Unlock()
			return okResponse(r)
		})
		tr := &Transport{Base: base, RetryTransient: true, Restraint: &Restraint{Adaptive: true}}
		ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute+30*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/", nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						time.Sleep(time.Second)
						continue
					}
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		if peak < 4 {
			t.Errorf("once the origin answered again (100ms each, never queueing), at most %d requests in flight for a minute; want Restraint's 4: the gateway's 502s, transient failures, were taken as its baseline latency", peak)
		}
	})
}

// sweep sends requests under other keys until the local ceilings' entry
// of host's origin is swept: next(i) returns the i-th key and a function
// that sends a request under it, called only for keys in the entry's
// shard. It skips the test when the entry is never swept.
func sweep(t *testing.T, tr *Transport, host string, next func(i int) (memKey, func() error)) {
	t.Helper()
	k := originKey("http", host).m
	sh := tr.ceil.shard(k)
	for i := range 400_000 {
		key, send := next(i)
		if tr.ceil.shard(key) != sh {
			continue
		}
		if err := send(); err != nil {
			t.Fatal(err)
		}
		sh.mu.Lock()
		_, ok := sh.m[k]
		sh.mu.Unlock()
		if !ok {
			return
		}
	}
	t.Skip(host + "'s entry was never swept")
}

// lastTwoApart checks that slow.test got 3 requests, the last two its
// Crawl-delay (2s) apart.
func lastTwoApart(t *testing.T, sent []time.Time) {
	t.Helper()
	if len(sent) != 3 {
		t.Fatalf("sent %d requests to slow.test, want 3", len(sent))
	}
	if gap := sent[2].Sub(sent[1]); gap < 2*time.Second {
		t.Errorf("two requests to slow.test went %v apart; want its Crawl-delay of 2s (sent at %v)", gap, sent)
	}
}
