package polite_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A first attempt that fails with a connection error is a first attempt:
// it adds its share to the key's retry budget, as one answered 502 does.
// 20 callers each send 20 GETs in turn, answered in 50 ms, and the first
// attempt of every other one fails, its connection reset or a gateway's
// 502; every retry is served. The budget spaces the retries, and the
// stream's time is theirs. Counted only when answered, the first attempts
// whose connections were reset added nothing, and that stream took 79 s
// where the stream of 502s took 59 s.
func TestTransientConnectionErrorsDeposit(t *testing.T) {
	took := map[int]time.Duration{}
	for _, status := range []int{0, http.StatusBadGateway} {
		synctest.Test(t, func(t *testing.T) {
			var (
				mu    sync.Mutex
				seen  = map[string]bool{}
				tasks atomic.Int64
			)
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				time.Sleep(50 * time.Millisecond)
				id := r.Header.Get("X-Task")
				mu.Lock()
				first := !seen[id]
				seen[id] = true
				mu.Unlock()
				var n int
				fmt.Sscan(id, &n)
				if first && n%2 == 0 {
					if status == 0 {
						return nil, errReset
					}
					return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				}
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			tr := &polite.Transport{Base: base, RetryTransient: true, MaxWait: time.Hour}
			start := time.Now()
			var wg sync.WaitGroup
			for range 20 {
				wg.Go(func() {
					for range 20 {
						req := newGet(t)
						req.Header.Set("X-Task", fmt.Sprint(tasks.Add(1)))
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
			took[status] = time.Since(start)
		})
	}
	if reset, gateway := took[0], took[http.StatusBadGateway]; reset > gateway*11/10 {
		t.Errorf("the stream whose failed first attempts' connections were reset took %v, the one answered 502 %v", reset, gateway)
	}
}
