package polite_test

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// An honest server whose clock is `ahead` of ours (within parse's 10-minute
// maxSkew, so its Date is trusted) and that stamps Date when it receives
// the request (as Apache httpd does, from r->request_time). It sends its
// rate-limit fields only from its 20th response on (e.g. only once the
// quota runs low). Responses 20 and 21 are in flight together, stamped in
// the same second: 20 answers in 10 ms (remaining 1), 21 in 3 s and spends
// the quota, whose reset is 60 s after request 20's arrival by the server's
// clock. The key had no Date with quotas before, so 21's lease carries no
// clock estimate. Read as frozen (its value first read 3 s before), 21's
// Date was dropped, and the reset measured from our clock: 5 minutes
// ahead, the next request waited 6 minutes; 5 minutes behind, it went
// at 3 s, before the reset. With no estimate, the Date is kept.
func TestFrozenDateKeptWithNoEstimate(t *testing.T) {
	for _, ahead := range []time.Duration{0, 5 * time.Minute, -5 * time.Minute} {
		t.Run(ahead.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				toNow()
				t0 := time.Now()
				var (
					mu    sync.Mutex
					n     int
					sends []time.Duration
					reset int64
					after atomic.Int64 // sends after the spend
				)
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					mu.Lock()
					n++
					i := n
					sends = append(sends, time.Since(t0))
					srv := time.Now().Add(ahead) // stamped at receipt
					if i == 20 {
						reset = srv.Truncate(time.Second).Add(time.Minute).Unix()
					}
					rs := reset
					mu.Unlock()
					h := http.Header{"Date": {srv.UTC().Format(http.TimeFormat)}}
					switch {
					case i < 20:
						time.Sleep(10 * time.Millisecond)
						return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
					case i == 20:
						time.Sleep(10 * time.Millisecond)
						h["X-Ratelimit-Remaining"] = []string{"1"}
					case i == 21:
						time.Sleep(3 * time.Second)
						h["X-Ratelimit-Remaining"] = []string{"0"}
					default:
						after.Add(1)
						h["X-Ratelimit-Remaining"] = []string{"9"}
						rs = srv.Add(time.Minute).Unix()
					}
					h["X-Ratelimit-Limit"] = []string{"10"}
					h["X-Ratelimit-Reset"] = []string{strconv.FormatInt(rs, 10)}
					return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
				})
				tr := &polite.Transport{Base: base, MaxWait: time.Hour}
				var wg sync.WaitGroup
				var left atomic.Int64
				left.Store(25)
				for range 4 {
					wg.Go(func() {
						for left.Add(-1) >= 0 {
							req, _ := http.NewRequest("GET", "http://apache.test/", nil)
							resp, err := tr.RoundTrip(req)
							if err != nil {
								t.Error(err)
								return
							}
							resp.Body.Close()
						}
					})
				}
				wg.Wait()
				t.Logf("sends of 19-25 at %v", sends[18:])
				if last := sends[len(sends)-1] - sends[19]; last > 90*time.Second {
					t.Errorf("the last request went %v after request 20; the quota reset 60 s after it by the server's clock", last)
				}
				if next := sends[21] - sends[19]; next < 58*time.Second {
					t.Errorf("the request after the quota was spent went %v after request 20, before its reset, 59 to 60 s after it", next)
				}
			})
		})
	}
}
