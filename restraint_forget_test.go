package polite

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// An origin stated a quota once,
// then stated nothing more; once the budget has forgotten the quota (idle
// for longer than IdleTTL), nothing paces the origin, and Restraint must
// hold it again rather than let every worker burst at once.
func TestRestraintAfterQuotaForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var stated atomic.Bool
		stated.Store(true)
		var mu sync.Mutex
		in, peak := 0, 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			in++
			peak = max(peak, in)
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			if stated.Load() {
				w.Header().Set("RateLimit-Policy", `"default";q=1000;w=1`)
				w.Header().Set("RateLimit", `"default";r=999;t=1`)
			}
			io.WriteString(w, "ok")
			mu.Lock()
			in--
			mu.Unlock()
		})
		tr := &Transport{Base: &ratelimittest.Transport{Handler: h}, Restraint: &Restraint{}}
		get := func() {
			resp, err := tr.RoundTrip(robotsReq(t, t.Context(), "http://silent.example/"))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		get() // the one answer that states a quota
		stated.Store(false)
		time.Sleep(time.Hour) // the budget forgets it (IdleTTL 10 min)
		if st, ok := tr.Inspect("http://silent.example", time.Now()); ok && len(st.Policies) > 0 {
			t.Fatalf("the budget still knows a quota: %+v", st)
		}
		mu.Lock()
		peak = 0
		mu.Unlock()
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(get)
		}
		wg.Wait()
		if peak > 4 {
			t.Errorf("%d requests in flight at once to an origin with no quota known, want at most Restraint's 4", peak)
		}
	})
}
