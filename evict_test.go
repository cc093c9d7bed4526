package polite_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A Budget keeping fewer keys than the origins in use (MaxKeys) loses what
// it evicts, but no key that requests wait on, and never the wait of a
// refused request. 50 honest origins of 5 requests a second, 1000 tasks
// spread over them, 4 keys kept: the pause of a refusal lived in its key's
// state, and a retry that found the key evicted went at once, all 8
// attempts of a task within 15ms (250 of 1000 ok, 6000 refused); and with
// the retries waiting, each woken by its key's eviction made the key again,
// evicting one another waited on, without end, at one instant.
func TestFewerKeysThanOrigins(t *testing.T) {
	for _, c := range []struct{ keys, workers int }{{4, 100}, {4, 16}, {49, 100}} {
		t.Run(fmt.Sprintf("MaxKeys %d, %d workers", c.keys, c.workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				hs := map[string]*ratelimittest.Handler{}
				for i := range 50 {
					hs[fmt.Sprintf("o%d.test", i)] = ratelimittest.NewHandler(ratelimittest.Config{
						Policies: []ratelimittest.Policy{{Name: "api", Quota: 5, Window: time.Second}},
						Latency:  5 * time.Millisecond,
					})
				}
				tr := &polite.Transport{
					Budget: &polite.Budget{MaxKeys: c.keys},
					Base: &ratelimittest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						hs[r.Host].ServeHTTP(w, r)
					})},
				}
				ok, took := runURLs(t, &http.Client{Transport: tr}, func(i int) string { return fmt.Sprintf("http://o%d.test/x", i%50) }, 1000, c.workers)
				refused := 0
				for _, h := range hs {
					refused += h.Stats().Refused
				}
				t.Logf("%d of 1000 ok, %d refused, in %v", ok, refused, took)
				// What an evicted key knew is lost: its next request
				// probes, and may be refused (42 to 48 of 1000 with 4
				// keys).
				if ok != 1000 || refused > 100 {
					t.Errorf("%d of 1000 ok, %d refused; want all ok, at most 100 refused", ok, refused)
				}
			})
		})
	}
}

// A refused request waits what its refusal asks even if its key is
// forgotten meanwhile (Budget.Forget): it went at once, its wait lost with
// the key's pause.
func TestRetryWaitOutlivesForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		var sent [2]time.Time
		b := &polite.Budget{}
		tr := &polite.Transport{Budget: b, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			i := n.Add(1)
			if i <= 2 {
				sent[i-1] = time.Now()
			}
			if i == 1 {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"5"}}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		go func() {
			time.Sleep(time.Second)
			b.Forget("http://api.test")
		}()
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if d := sent[1].Sub(sent[0]); n.Load() != 2 || d < 5*time.Second {
			t.Errorf("%d sends, the retry %v after the refusal; want 2, 5s or more (Retry-After: 5)", n.Load(), d)
		}
	})
}
