package polite_test

import (
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

// firstSegment returns the first segment of r's path.
func firstSegment(r *http.Request) string {
	return strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0]
}

// runURLs runs n tasks from workers goroutines through c, task i getting
// url(i), and returns how many were answered 200 and how long they took.
func runURLs(t *testing.T, c *http.Client, url func(int) string, n, workers int) (int, time.Duration) {
	var (
		ok   atomic.Int64
		next atomic.Int64
		wg   sync.WaitGroup
	)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				resp, err := c.Get(url(i))
				if err != nil {
					t.Errorf("task %d: %v", i, err)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(ok.Load()), time.Since(start)
}

// resourceNamed serves h as the GitHub resource name (h states "core").
func resourceNamed(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&rewriter{ResponseWriter: w, fix: func(hd http.Header) { hd.Set("X-RateLimit-Resource", name) }}, r)
	})
}

// One origin that keeps limits for different requests paces them as one
// under one key, as documented (README, "Sharing budgets"); a Transport.Key
// that tells them apart paces each by its own. GitHub's shape: /repos is
// the resource "core" (5000 an hour), /search "search" (10 a minute), one
// task in four a search; the perfect client takes 2m (the 30 searches, 10 a
// minute). Keyed by origin, the core requests waited for the search
// resource's reset: 0.67 of ideal.
func TestKeyPerResourcePacesEachApart(t *testing.T) {
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprintf("key per resource %v", split), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				core := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 5000, Window: time.Hour}}, Dialect: ratelimittest.GitHub, Latency: 5 * time.Millisecond})
				search := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Minute}}, Dialect: ratelimittest.GitHub, Latency: 5 * time.Millisecond})
				routes := map[string]http.Handler{"repos": resourceNamed("core", core), "search": resourceNamed("search", search)}
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					routes[firstSegment(r)].ServeHTTP(w, r)
				})}}
				if split {
					tr.Key = func(r *http.Request) string {
						if strings.HasPrefix(r.URL.Path, "/search/") {
							return "api.test search"
						}
						return "api.test"
					}
				}
				ok, took := runURLs(t, &http.Client{Transport: tr}, func(i int) string {
					if i%4 == 0 {
						return "http://api.test/search/issues"
					}
					return "http://api.test/repos/o/r"
				}, 120, 8)
				ideal := 2*time.Minute + 5*time.Millisecond
				eff := ideal.Seconds() / took.Seconds()
				t.Logf("%d of 120 ok in %v, %.2f of ideal", ok, took, eff)
				if refused := core.Stats().Refused + search.Stats().Refused; ok != 120 || refused != 0 {
					t.Errorf("%d of 120 ok, %d refused; want all ok, none refused", ok, refused)
				}
				if split && eff < 0.9 {
					t.Errorf("keyed per resource: %.2f of ideal, want 0.90 at least", eff)
				}
			})
		})
	}
}

// The same of an IETF policy partitioned by user (pk), 10 a second each,
// the tasks alternating between two users: keyed by origin, both
// partitions apply to every request, 0.47 of ideal; keyed per user, each
// goes at its own pace.
func TestKeyPerPartitionPacesEachApart(t *testing.T) {
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprintf("key per partition %v", split), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				h := ratelimittest.NewHandler(ratelimittest.Config{
					Policies: []ratelimittest.Policy{{Name: "user", Quota: 10, Window: time.Second, Partition: firstSegment}},
					Latency:  5 * time.Millisecond,
				})
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
				if split {
					tr.Key = firstSegment
				}
				ok, took := runURLs(t, &http.Client{Transport: tr}, func(i int) string { return fmt.Sprintf("http://api.test/u%d/items", i%2) }, 200, 16)
				ideal := 9*time.Second + 5*time.Millisecond // ten windows of 10 each
				eff := ideal.Seconds() / took.Seconds()
				t.Logf("%d of 200 ok in %v, %.2f of ideal", ok, took, eff)
				if refused := h.Stats().Refused; ok != 200 || refused != 0 {
					t.Errorf("%d of 200 ok, %d refused; want all ok, none refused", ok, refused)
				}
				if split && eff < 0.9 {
					t.Errorf("keyed per partition: %.2f of ideal, want 0.90 at least", eff)
				}
			})
		})
	}
}
