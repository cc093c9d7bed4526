package polite_test

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// An answer from a cache (Age above 0) gives back the start its request
// took from a stated quota's pace: the origin did not see it. Here a CDN
// answers every HEAD (Age: 3, no fields) before an IETF server of 20 per
// 4s, and tasks alternate HEAD and GET, 200 in all: the 100 GETs need
// five windows. Every HEAD counted against the quota, which ran the
// tasks in 36s (0.44 of ideal); now 20s, the last HEAD waiting one window
// more, as a client that cannot tell a cached answer before it comes
// must.
func TestCachedAnswersGiveBackTheirStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := ratelimittest.Config{Policies: []ratelimittest.Policy{{Name: "api", Quota: 20, Window: 4 * time.Second}}, Dialect: ratelimittest.IETF, Latency: 5 * time.Millisecond}
		h := ratelimittest.NewHandler(cfg)
		c, _ := politeOver(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead {
				w.Header().Set("Age", "3")
				return
			}
			h.ServeHTTP(w, r)
		}))
		start := time.Now()
		tasks := make(chan string, 200)
		for i := range 200 {
			tasks <- [2]string{http.MethodHead, http.MethodGet}[i%2]
		}
		close(tasks)
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for m := range tasks {
					req, _ := http.NewRequest(m, "http://api.test/", nil)
					resp, err := c.Do(req)
					if err != nil {
						t.Error(err)
						continue
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Errorf("%s: %d", m, resp.StatusCode)
					}
				}
			})
		}
		wg.Wait()
		if d, s := time.Since(start), h.Stats(); d > 21*time.Second || s.Refused > 0 {
			t.Errorf("200 tasks, half answered by a cache: %v, %d refused; want five windows and one more, and none refused", d, s.Refused)
		}
	})
}
