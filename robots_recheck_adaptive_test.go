package polite

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// slowRobotsOrigin answers pages in 100ms, and robots.txt (allowing every
// path) at once the first time, then in robotsDelay: a robots.txt served
// slowly, as from a busy origin, within the 30 s a fetch may take.
type slowRobotsOrigin struct {
	robotsDelay time.Duration
	fetches     atomic.Int64
	served      atomic.Int64
}

func (s *slowRobotsOrigin) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	if req.URL.Path == "/robots.txt" {
		if s.fetches.Add(1) > 1 {
			time.Sleep(s.robotsDelay)
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("User-agent: *\nAllow: /\n")), Request: req}, nil
	}
	time.Sleep(100 * time.Millisecond)
	s.served.Add(1)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// A request whose robots.txt verdict expired while it waited holds its
// grant through the fetch of the file in force. Restraint's start of the
// request was its grant, and Restraint.Adaptive's latency sample is from
// that start to the response: the robots.txt fetch, 20 s here, was read as
// the origin's latency, and the limit came down from 4 to 3 though the
// origin never got slower. The start is the send now.
func TestRecheckLatencyIsTheOrigins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		site := &slowRobotsOrigin{robotsDelay: 20 * time.Second}
		tr := &Transport{Base: site, Robots: &Robots{}, Restraint: &Restraint{Adaptive: true}}
		get := func() {
			req, _ := http.NewRequest(http.MethodGet, "http://a.example/p", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}
		run := func(workers, each int) {
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for range each {
						get()
					}
				})
			}
			wg.Wait()
		}
		run(4, 40) // the baseline: 100ms
		key := originKey("http", "a.example").m
		grad := func() gradient {
			sh := tr.ceil.shard(key)
			sh.mu.Lock()
			defer sh.mu.Unlock()
			if e := sh.m[key]; e != nil && e.grad != nil {
				return *e.grad
			}
			return gradient{}
		}
		before := grad()
		// Just before robots.txt's 24 hours end, 12 requests at once:
		// those Restraint holds are granted after the end.
		time.Sleep(24*time.Hour - 50*time.Millisecond - time.Since(start))
		run(12, 1)
		after := grad()
		// Then the origin as before, 100ms a request, for 10 s with 8
		// workers.
		served := site.served.Load()
		done := time.Now().Add(10 * time.Second)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for time.Now().Before(done) {
					get()
				}
			})
		}
		wg.Wait()
		n := site.served.Load() - served
		t.Logf("before: lim %d srtt %v base %v; after the 24h end: lim %d srtt %v base %v; 10 s after: %d served; robots.txt fetched %d times",
			before.lim, before.srtt, before.base, after.lim, after.srtt, after.base, n, site.fetches.Load())
		if after.srtt > 2*before.base || after.lim < before.lim {
			t.Errorf("the origin answered in 100ms throughout, but Restraint.Adaptive read a latency of %v (baseline %v) and its limit went from %d to %d: the robots.txt fetch held with the grant counted as latency", after.srtt, after.base, before.lim, after.lim)
		}
	})
}
