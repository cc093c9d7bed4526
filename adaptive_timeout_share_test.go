package polite

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// shareDialTimeout is the error of a dial that timed out.
type shareDialTimeout struct{}

func (shareDialTimeout) Error() string   { return "i/o timeout" }
func (shareDialTimeout) Timeout() bool   { return true }
func (shareDialTimeout) Temporary() bool { return true }

// While timeouts counted toward the latency, by their number, each
// raising srtt by an eighth, answers could not bring it back once a
// quarter of the samples were timeouts: srtt settled at (1-p)/(1-2p) times
// the answers' latency, whatever the load. Two ordinary setups pinned the
// limit at or near 1 although no answer got slower:
//
//   - a custom Key grouping a site's hosts, one in four requests to a
//     host that is down (every dial times out after 10s): limit 16 → 1,
//     successes 4.7/s → 0.3/s;
//   - one request in three to an endpoint that hangs past
//     http.Client.Timeout (2s): limit 16 → about 4, swinging between 1
//     and 16; successes 30.4/s → 19.3/s.
//
// Timeouts are not counted, and this guards it.
func TestAdaptiveTimeoutShareLeavesLimit(t *testing.T) {
	t.Parallel() // a bubble of its own: only the CPU is shared
	for _, tc := range []struct {
		name    string
		every   int64         // one request in every goes to the bad host or endpoint
		timeout time.Duration // http.Client.Timeout
		bad     func(r *http.Request) (*http.Response, error)
		url     func(bad bool) string
	}{
		{"dead host under a custom Key", 4, 0, func(r *http.Request) (*http.Response, error) {
			select {
			case <-time.After(10 * time.Second):
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: shareDialTimeout{}}
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		}, func(bad bool) string {
			if bad {
				return "http://dead.example.com/"
			}
			return "http://www.example.com/"
		}},
		{"hung endpoint behind Client.Timeout", 3, 2 * time.Second, func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}, func(bad bool) string {
			if bad {
				return "http://www.example.com/hangs"
			}
			return "http://www.example.com/"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var n, served atomic.Int64
				base := roundTripper(func(r *http.Request) (*http.Response, error) {
					if r.URL.Host == "dead.example.com" || r.URL.Path == "/hangs" {
						return tc.bad(r)
					}
					select {
					case <-time.After(50 * time.Millisecond): // never queues
					case <-r.Context().Done():
						return nil, r.Context().Err()
					}
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				tr := &Transport{Base: base, Restraint: &Restraint{MaxConcurrency: 16, Adaptive: true},
					Key: func(*http.Request) string { return "example.com" }}
				client := &http.Client{Transport: tr, Timeout: tc.timeout}
				ctx, cancel := context.WithTimeout(t.Context(), 12*time.Minute)
				defer cancel()
				var wg sync.WaitGroup
				for range 64 {
					wg.Go(func() {
						for ctx.Err() == nil {
							req, _ := http.NewRequestWithContext(ctx, http.MethodGet, tc.url(n.Add(1)%tc.every == 0), nil)
							resp, err := client.Do(req)
							if err != nil {
								continue
							}
							if resp.StatusCode == http.StatusOK && time.Since(start) >= 2*time.Minute {
								served.Add(1)
							}
							resp.Body.Close()
						}
					})
				}
				k := splitKey("example.com")
				limit := func() int {
					sh := tr.ceil.shard(k)
					sh.mu.Lock()
					defer sh.mu.Unlock()
					if e := sh.m[k]; e != nil && e.grad != nil {
						return e.grad.limit()
					}
					return 0
				}
				time.Sleep(2 * time.Minute)
				var sum, samples int
				for time.Since(start) < 12*time.Minute-time.Second {
					time.Sleep(100 * time.Millisecond)
					sum += limit()
					samples++
				}
				cancel()
				wg.Wait()
				mean := float64(sum) / float64(samples)
				rate := float64(served.Load()) / (10 * 60)
				t.Logf("minutes 2-12: limit %.1f on average, %.1f answers of 50ms a second", mean, rate)
				if mean < 8 {
					t.Errorf("minutes 2-12: the limit was %.1f on average (MaxConcurrency 16, which it keeps when timeouts are not counted), %.1f answers a second, with one request in %d timing out and every answer in 50ms whatever the load: a share of timeouts reads as queueing", mean, rate, tc.every)
				}
			})
		})
	}
}
