package polite_test

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// cacheOrOrigin answers from the origin in 100ms, whatever its load (the
// origin never queues), or, when cached says so, from a shared cache:
// with status and an Age, after delay. It counts the requests in flight at
// each, and the origin's answers.
type cacheOrOrigin struct {
	cached        func() bool
	delay         time.Duration
	status        int
	origin, cache polite.PeakCounter
	served        atomic.Int64
}

func (c *cacheOrOrigin) RoundTrip(req *http.Request) (*http.Response, error) {
	if c.cached() {
		c.cache.Enter()
		time.Sleep(c.delay)
		c.cache.Leave()
		h := http.Header{"Age": {"120"}, "Cache-Control": {"public, max-age=600"}}
		return &http.Response{StatusCode: c.status, Header: h, Body: http.NoBody, Request: req}, nil
	}
	c.origin.Enter()
	time.Sleep(100 * time.Millisecond)
	c.origin.Leave()
	c.served.Add(1)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// cachedFrom returns a cacheOrOrigin.cached that says so from at on.
func cachedFrom(at time.Time) func() bool { return func() bool { return !time.Now().Before(at) } }

// Restraint.Adaptive lowers the limit "when its latency rises well above
// its own baseline" (the origin's). An answer from a cache (Age > 0) did
// not come from the origin, and the package says so elsewhere: its
// rate-limit fields never change a budget, and its start is given back.
// Its latency was sampled all the same: a cache's 1ms hits became the
// origin's baseline, and the limit collapsed from 4 to 1 against an
// origin that answers in 100ms and never queues.
func TestAdaptiveCachedAnswersSetNoBaseline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var hit atomic.Bool
		base := &cacheOrOrigin{cached: hit.Load, delay: time.Millisecond, status: http.StatusOK}
		tr := &polite.Transport{
			Base:      base,
			Restraint: &polite.Restraint{Adaptive: true}, // limit 4
		}
		// A crawler's first pages are popular: served by the cache.
		hit.Store(true)
		for range 64 {
			req, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		// The deeper pages miss: the origin answers in 100ms, whatever
		// its load. 8 workers for 20s.
		hit.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		wait := polite.GetUntil(ctx, tr, 8, "http://a.test/deep")
		time.Sleep(10 * time.Second)
		base.origin.Peak.Store(base.origin.In.Load())
		before := base.served.Load()
		wait()
		if p, n := base.origin.Peak.Load(), base.served.Load()-before; p < 4 || n < 300 {
			t.Errorf("over the last 10s: peak in flight at the origin %d, %d answered; want 4 and about 400: the cache's answers were sampled as the origin's baseline", p, n)
		}
	})
}

// Restraint.Adaptive halves the limit while it re-measures the baseline,
// "for at most 17 round trips". The measurement ended only when a sample
// arrived past its end, and an answer from a cache (Age > 0) is no
// sample. When every answer came from a cache once the drain had begun
// (the pages a crawler asks for are now popular), the drain never ended:
// the limit stayed halved (2 of 4 here) for as long as the cache
// answered, minutes after the 17 round trips.
func TestAdaptiveDrainEndsWithCachedAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Misses until just after the re-measurement's drain began (the
		// first measurement ends about 1.6 s in, the drain about 5 min
		// after, its measurement 1.7 s long); hits after.
		switchAt := time.Now().Add(5*time.Minute + 2500*time.Millisecond)
		base := &cacheOrOrigin{cached: cachedFrom(switchAt), delay: 50 * time.Millisecond, status: http.StatusOK}
		tr := &polite.Transport{Base: base, Restraint: &polite.Restraint{Adaptive: true}} // limit 4
		ctx, cancel := context.WithCancel(context.Background())
		wait := polite.GetUntil(ctx, tr, 8, "http://a.test/")
		time.Sleep(time.Minute)
		if p := base.origin.Peak.Load(); p != 4 {
			t.Fatalf("peak in flight at the origin in the first minute %d, want 4 (setup)", p)
		}
		// A minute of cached answers, then a minute measured: far more
		// than 17 round trips of 100 ms after the drain began.
		time.Sleep(time.Until(switchAt) + time.Minute)
		base.cache.Peak.Store(base.cache.In.Load())
		time.Sleep(time.Minute)
		cancel()
		wait()
		if p := base.cache.Peak.Load(); p < 4 {
			t.Errorf("peak in flight over the last minute %d, want 4: the adaptive limit stayed halved by a drain that only a sample (never a cache's answer) can end", p)
		}
	})
}

// Restraint.Adaptive's doc: no latency is counted from "an answer from a
// cache (an Age above 0), which says nothing of the origin's". The
// Transport tested for a 5xx first: a cached 5xx (CDNs cache 500s for
// seconds by default) was sampled as an error answer, counted whenever it
// was slower than the smoothed latency. A cache node slow to answer its
// cached 500s (1 s here, against an origin measured at 100 ms) brought
// the origin's limit down from 4 to 1.
func TestAdaptiveCachedErrorNotSampled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		switchAt := time.Now().Add(10 * time.Second) // well after the first measurement (~1.6 s)
		base := &cacheOrOrigin{cached: cachedFrom(switchAt), delay: time.Second, status: http.StatusInternalServerError}
		tr := &polite.Transport{Base: base, Restraint: &polite.Restraint{Adaptive: true}} // limit 4
		ctx, cancel := context.WithCancel(context.Background())
		wait := polite.GetUntil(ctx, tr, 8, "http://a.test/")
		time.Sleep(time.Until(switchAt) + 30*time.Second)
		base.cache.Peak.Store(base.cache.In.Load())
		time.Sleep(30 * time.Second)
		cancel()
		wait()
		if p := base.origin.Peak.Load(); p != 4 {
			t.Fatalf("peak in flight at the origin %d, want 4 (setup)", p)
		}
		if p := base.cache.Peak.Load(); p < 4 {
			t.Errorf("peak in flight over the last 30s of cached 500s %d, want 4: a cache's answer that is a 5xx was sampled as the origin's latency", p)
		}
	})
}
