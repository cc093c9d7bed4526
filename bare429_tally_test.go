package polite_test

import (
	"flag"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

var (
	bare429Tally = flag.Int("bare429tally", 0, "runs of each cell of the bare-429 tally (0: skip): 40 tasks against a fixed window and a token bucket of 10 that state nothing, by callers and window; the failed tasks and the mean run")
	bare429Cell  = flag.String("bare429cell", "", "with -bare429tally, run only the cell named so: the algorithm, callers and window, as in \"token-bucket/2/5m0s\"")
)

// TestBare429Tally prints, for servers that state nothing (a bare 429, no
// Retry-After) and limit to 10 per window, the tasks of 40 that failed (an
// error, or a status other than 200) and the mean run, over -bare429tally
// runs of each of 1, 2, 3, 4 and 8 callers and windows of 40 s, a minute,
// 2 and 5 minutes: the figures DESIGN.md §6 ("a probe spends an attempt")
// quotes. Each run is a synctest bubble; none asserts anything.
//
//	go test -run 'TestBare429Tally$' -bare429tally 40 -v .
//	go test -run 'TestBare429Tally$' -bare429tally 200 -bare429cell token-bucket/2/5m0s -v .
func TestBare429Tally(t *testing.T) {
	if *bare429Tally <= 0 {
		t.Skip("run with -bare429tally N")
	}
	for _, alg := range []ratelimittest.Algorithm{ratelimittest.FixedWindow, ratelimittest.TokenBucket} {
		for _, workers := range []int{1, 2, 3, 4, 8} {
			for _, w := range []time.Duration{40 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute} {
				if *bare429Cell != "" && *bare429Cell != fmt.Sprintf("%s/%d/%v", alg, workers, w) {
					continue
				}
				failed := 0
				var took time.Duration
				for range *bare429Tally {
					synctest.Test(t, func(t *testing.T) {
						present()
						c := &http.Client{Transport: &polite.Transport{Base: bareServer(alg, w)}}
						start := time.Now()
						failed += 40 - tallyServed(c, 40, workers)
						took += time.Since(start)
					})
				}
				t.Logf("%s, %d callers, window %v: %d tasks failed, mean run %v",
					alg, workers, w, failed, (took / time.Duration(*bare429Tally)).Round(time.Second))
			}
		}
	}
}

// tallyServed runs n tasks over workers callers of c and returns how many
// were served (status 200, no error).
func tallyServed(c *http.Client, n, workers int) int {
	var (
		mu     sync.Mutex
		served int
		next   = make(chan struct{}, n)
		wg     sync.WaitGroup
	)
	for range n {
		next <- struct{}{}
	}
	close(next)
	for range workers {
		wg.Go(func() {
			for range next {
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
				if code, err := statusOf(c, req); err == nil && code == http.StatusOK {
					mu.Lock()
					served++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return served
}

// bareServer returns, in memory, a server that limits to 10 requests per
// window w by alg, and states nothing: its refusals are bare 429s, with no
// Retry-After.
func bareServer(alg ratelimittest.Algorithm, w time.Duration) *ratelimittest.Transport {
	return &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Name: "api", Algorithm: alg, Quota: 10, Window: w}},
		Dialect:  ratelimittest.Bare429,
	})}
}
