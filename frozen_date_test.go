package polite_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// A server whose Date is frozen at its first response's (a broken server,
// or a proxy that repeats one), its clock and resets right: 10 requests
// per 10 s, 100 tasks from 4 workers, resets as epoch seconds or HTTP
// dates. Each Date, further behind, restarted the key's estimate of the
// server's clock, and each reset was measured from it: the waits doubled
// window after window, until the Date was 10 minutes behind, and the run
// took 11 minutes where 100 s would do, no request refused. A server that
// advertises 100 times what it enforces, refusing with a Retry-After date,
// had each refusal's wait measured from the frozen Date too: 3 minutes,
// one task waiting 79 s. A Date whose value comes back 2 s after it was
// first read is no clock, and is read as none.
func TestFrozenDate(t *testing.T) {
	tests := []struct {
		dialect ratelimittest.Dialect
		inflate int64
		refused int // at most
	}{
		{ratelimittest.XRateLimitEpoch, 0, 0},
		{ratelimittest.GitHub, 0, 0},
		{ratelimittest.XRateLimitDate, 0, 0},
		{ratelimittest.XRateLimitDate, 100, 10},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/inflated×%d", tt.dialect, tt.inflate), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				toNow()
				h := ratelimittest.NewHandler(ratelimittest.Config{
					Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: 10 * time.Second}},
					Dialect:  tt.dialect,
					Latency:  20 * time.Millisecond,
					Inflate:  tt.inflate,
				})
				c, tr := politeOver(frozenDate(h))
				tr.MaxWait = time.Hour
				start := time.Now()
				statuses, longest := runLongest(t, c, "http://api.test/", 100, 4)
				took := time.Since(start)
				if s := h.Stats(); statuses[200] != 100 || s.Refused > tt.refused || took > 2*time.Minute || longest > 15*time.Second {
					t.Errorf("statuses %v, %d refused, took %v, the longest task %v: want 100 served, at most %d refused, in about 100 s", statuses, s.Refused, took, longest, tt.refused)
				}
			})
		})
	}
}

// frozenDate wraps h so that every response's Date is its first one's.
func frozenDate(h http.Handler) http.Handler {
	var (
		mu    sync.Mutex
		first string
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&rewriter{ResponseWriter: w, fix: func(hdr http.Header) {
			mu.Lock()
			defer mu.Unlock()
			if first == "" {
				first = hdr.Get("Date")
			}
			hdr.Set("Date", first)
		}}, r)
	})
}
