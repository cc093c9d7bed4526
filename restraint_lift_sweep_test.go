package polite_test

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// Once many other origins were seen, the ceilings' sweep dropped the
// entry of an origin that had stated its quota the moment its last request
// ended, and with it the quota's lift: Restraint's limit of 4 came back
// for an origin used in every batch, within two seconds of its quota and
// while the Budget still knew it (after 28,000 to 54,000 other origins).
// A lift is kept while it lasts now, unless a shard holds ceilingHard
// entries.
func TestRestraintLiftKeptThroughSweep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		in, peak := 0, 0
		first := true
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host != "origin.example" {
				return // other origins: answer at once, state nothing
			}
			mu.Lock()
			in++
			peak = max(peak, in)
			st := first
			first = false
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			if st {
				w.Header().Set("RateLimit-Policy", `"hour";q=100000;w=3600`)
				w.Header().Set("RateLimit", `"hour";r=99999;t=3600`)
			}
			mu.Lock()
			in--
			mu.Unlock()
		})
		tr := &polite.Transport{
			Base:      &ratelimittest.Transport{Handler: h},
			Restraint: &polite.Restraint{},
			Budget:    &polite.Budget{MaxKeys: 1 << 20},
		}
		get := func(u string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		burst := func() int {
			mu.Lock()
			peak = 0
			mu.Unlock()
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() { get("http://origin.example/") })
			}
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			return peak
		}
		get("http://origin.example/") // states the quota
		if p := burst(); p <= 4 {
			t.Fatalf("baseline: only %d in flight right after the quota was stated", p)
		}
		start := time.Now()
		n := 0
		for batch := range 30 {
			for range 2000 {
				get(fmt.Sprintf("http://o%d.example/", n))
				n++
			}
			p := burst()
			st, known := tr.Inspect("http://origin.example", time.Now())
			if p <= 4 {
				t.Fatalf("after %d other origins (batch %d, %v of virtual time since the quota, origin used in every batch), "+
					"only %d of 16 requests in flight at once: Restraint's cap applies again although the budget still knows the quota (known=%v, policies=%d)",
					n, batch, time.Since(start), p, known, len(st.Policies))
			}
		}
	})
}
